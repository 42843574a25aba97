"""``Progress``: how far an export or import has got, on standard error — a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["PLAIN_STEP", "Progress"]

#: Without a total, a plain line each time this many more values are done.
PLAIN_STEP = 100_000
_WIDTH = 30
#: A terminal's bar is drawn again at most this often (seconds), and once at the end.
_REDRAW = 0.1


class Progress:
    """Called with the values done so far. With ``total`` and ``done`` (e.g. the file's size and the bytes read of
    it), a terminal shows a bar with the part done and the rate, and other output gets a plain line at each tenth;
    without them, a count (plain: every ``PLAIN_STEP`` values). ``close()`` ends the terminal's line."""

    def __init__(
        self,
        verb: str,
        out: TextIO,
        *,
        terminal: bool,
        total: int | None = None,
        done: Callable[[], int] | None = None,
    ) -> None:
        self._verb, self._out, self._terminal = verb, out, terminal
        self._total = total if total and done is not None else None
        self._done = done
        self._started = self._drawn = time.monotonic()
        self._said = 0  # plain lines: the last tenth (or step) told
        self._count = 0

    def __call__(self, count: int) -> None:
        self._count = count
        part = self._part()
        if self._terminal:
            now = time.monotonic()
            if now - self._drawn >= _REDRAW or part == 1.0:
                self._drawn = now
                self._draw(count, part, now)
            return
        mark = count // PLAIN_STEP if part is None else int(part * 10)
        if mark > self._said:
            self._said = mark
            where = "" if part is None else f" ({mark * 10}%)"
            print(f"{self._verb} {count:,} values{where}", file=self._out, flush=True)

    def _part(self) -> float | None:
        return None if self._total is None or self._done is None else min(self._done() / self._total, 1.0)

    def _draw(self, count: int, part: float | None, now: float) -> None:
        rate = count / max(now - self._started, 1e-9)
        if part is None:
            line = f"\r{self._verb} {count:,} values, {rate:,.0f}/s"
        else:
            filled = round(part * _WIDTH)
            line = (
                f"\r{self._verb} [{'#' * filled}{'.' * (_WIDTH - filled)}] {part:4.0%} {count:,} values, {rate:,.0f}/s"
            )
        print(line, end="", file=self._out, flush=True)

    def close(self) -> None:
        if self._terminal:
            self._draw(self._count, self._part(), time.monotonic())
            print(file=self._out, flush=True)
