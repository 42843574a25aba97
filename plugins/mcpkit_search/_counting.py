"""Counting a text's index terms through a word -> terms mapping (a cache), in one pass.

``count_tokens`` counts the terms of words already cut; ``count_ascii`` cuts
ASCII text the analyser's way (runs of ASCII letters and digits) and counts in
the same pass. ``count_ascii`` is compiled from ``_counting_c.pyx`` (Cython)
when mcpkit was installed with a C compiler at hand, and is this module's
Python otherwise; both give the same counts (a test holds them to it). The
compiled one cuts and counts without building the list of words or the list of
terms: indexing sits on every write of a searchable value (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain
from typing import TypeVar

__all__ = ["COMPILED", "ascii_tokens", "count_ascii", "count_tokens"]

T = TypeVar("T")

# Every byte that is not an ASCII letter or digit becomes a space (bytes.translate is one table lookup per
# byte, several times faster than a word regex).
_ASCII_SPACES = bytes(byte if chr(byte).isalnum() and byte < 128 else 32 for byte in range(256))


def ascii_tokens(text: str) -> list[str]:
    """The words of ASCII ``text`` as written: its runs of ASCII letters and digits."""
    return text.encode("ascii").translate(_ASCII_SPACES).decode("ascii").split()


def count_tokens(words: Mapping[str, tuple[T, ...]], tokens: Iterable[str]) -> tuple[dict[T, int], int]:
    """Each term ``words[token]`` gives for ``tokens``, with how often it comes, and how many came in all."""
    terms = list(chain.from_iterable(map(words.__getitem__, tokens)))
    counts = dict.fromkeys(terms, 1)  # most texts name each term once: counted only when one repeats
    if len(counts) != len(terms):
        counts = dict.fromkeys(counts, 0)  # (a loop of += costs less than building a Counter)
        for term in terms:
            counts[term] += 1
    return counts, len(terms)


def _count_ascii(words: Mapping[str, tuple[T, ...]], text: str) -> tuple[dict[T, int], int]:
    """``count_tokens`` of ``ascii_tokens(text)``."""
    return count_tokens(words, ascii_tokens(text))


try:
    from ._counting_c import count_ascii
except ImportError:  # installed without a C compiler (or from a source tree never built): the same, in Python
    count_ascii = _count_ascii
    COMPILED = False
else:
    COMPILED = True
