from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")

def count_ascii(words: Mapping[str, tuple[T, ...]], text: str) -> tuple[dict[T, int], int]: ...
