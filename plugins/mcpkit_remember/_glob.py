"""``Glob``: shell-style patterns over keys (``*``, ``?``, ``[...]``), matched in time linear in the key.

``fnmatch.fnmatchcase``'s semantics without compiling a regular expression (docs/architecture.md says why).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

__all__ = ["MAX_PATTERN_LENGTH", "Glob"]

#: Longer patterns are refused: no key is longer than 256 characters.
MAX_PATTERN_LENGTH = 1024
#: More ``[...]`` classes than this are refused: each costs a test per distinct character of the keys.
MAX_CLASSES = 16


class _Class:
    """A ``[...]`` token: sorted, disjoint code point ranges, possibly negated."""

    __slots__ = ("ends", "negated", "starts")

    def __init__(self, ranges: Iterable[tuple[int, int]], negated: bool) -> None:
        merged: list[list[int]] = []
        for start, end in sorted(ranges):
            if merged and start <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.starts = [start for start, _ in merged]
        self.ends = [end for _, end in merged]
        self.negated = negated

    def __contains__(self, char: str) -> bool:
        point = ord(char)
        at = bisect.bisect_right(self.starts, point) - 1
        inside = at >= 0 and point <= self.ends[at]
        return inside != self.negated


_Token = str | _Class | None  # a literal character, a class, or None for '?'


class Glob:
    """A pattern, parsed once; ``match(key)`` runs in time linear in the key."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise ValueError(f"a pattern has at most {MAX_PATTERN_LENGTH} characters; this one has {len(pattern)}")
        self.pattern = pattern
        self._tokens: list[_Token] = []
        loops = 0  # bit i: a '*' at position i (after i tokens) may consume any character
        index, length = 0, len(pattern)
        while index < length:
            char = pattern[index]
            index += 1
            if char == "*":
                loops |= 1 << len(self._tokens)
            elif char == "?":
                self._tokens.append(None)
            elif char == "[":
                token, index = _parse_class(pattern, index)
                self._tokens.append(token)
            else:
                self._tokens.append(char)
        classes = [(1 << at, token) for at, token in enumerate(self._tokens) if isinstance(token, _Class)]
        if len(classes) > MAX_CLASSES:
            raise ValueError(f"a pattern has at most {MAX_CLASSES} [...] classes; this one has {len(classes)}")
        self._classes = classes
        self._any = 0  # positions of '?'
        self._literals: dict[str, int] = {}  # character -> positions of that literal
        for at, token in enumerate(self._tokens):
            if token is None:
                self._any |= 1 << at
            elif isinstance(token, str):
                self._literals[token] = self._literals.get(token, 0) | 1 << at
        self._loops = loops
        self._accept = 1 << len(self._tokens)
        self._masks: dict[str, int] = {}
        literal: list[str] = []
        for token in self._tokens:
            if loops & (1 << len(literal)) or not isinstance(token, str):
                break
            literal.append(token)
        self._prefix = "".join(literal)

    def match(self, text: str) -> bool:
        """Whether the whole of ``text`` matches the pattern (case-sensitive, as ``fnmatchcase``)."""
        if not text.startswith(self._prefix):
            return False
        state, loops, masks = 1, self._loops, self._masks
        for char in text:
            mask = masks.get(char)
            if mask is None:
                mask = masks[char] = self._mask(char)
            state = ((state & mask) << 1) | (state & loops)
            if not state:
                return False
        return bool(state & self._accept)

    def _mask(self, char: str) -> int:
        """Bit i set when token i accepts ``char``."""
        mask = self._any | self._literals.get(char, 0)
        for bit, token in self._classes:
            if char in token:
                mask |= bit
        return mask


def _parse_class(pattern: str, index: int) -> tuple[_Token, int]:
    """The token for a class whose ``[`` is just before ``index``, and where parsing goes on.

    As in ``fnmatch``: ``!`` first negates, a ``]`` first (after ``!``) is a member, ``a-z`` is a
    range, a reversed range is empty, and a ``[`` without a closing ``]`` is a literal ``[``.
    """
    end = index
    if end < len(pattern) and pattern[end] == "!":
        end += 1
    if end < len(pattern) and pattern[end] == "]":
        end += 1
    end = pattern.find("]", end)
    if end < 0:
        return "[", index
    body = pattern[index:end]
    negated = body.startswith("!")
    if negated:
        body = body[1:]
    ranges: list[tuple[int, int]] = []
    at = 0
    while at < len(body):
        if at + 2 < len(body) and body[at + 1] == "-":
            low, high = ord(body[at]), ord(body[at + 2])
            if low <= high:
                ranges.append((low, high))
            at += 3
        else:
            ranges.append((ord(body[at]), ord(body[at])))
            at += 1
    return _Class(ranges, negated), end + 1
