"""Counting tokens: a tokenizer you give (``tokenizer=``), else ``tiktoken``'s ``cl100k_base`` when it is installed
with its encoding cached locally, else an estimate of one token per 4 bytes of UTF-8 (rounded up)."""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["BYTES_PER_TOKEN", "Counter", "estimate", "local_counter"]

#: The estimate: bytes of UTF-8 per token.
BYTES_PER_TOKEN = 4

Counter = Callable[[str], int]


def estimate(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def local_counter() -> tuple[Counter, str]:
    """The best counter this machine has without a network: tiktoken's, if its encoding loads, else the estimate."""
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]

        encoding = tiktoken.get_encoding("cl100k_base")  # offline only when its file is cached already
    except Exception:
        return estimate, f"estimate (1 token per {BYTES_PER_TOKEN} bytes)"

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count, "tiktoken cl100k_base"
