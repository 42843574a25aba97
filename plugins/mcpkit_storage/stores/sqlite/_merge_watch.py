"""``MergeWatch``: who an SQLite store tells of its search index's merge steps (an observed vault's ``merge_index``
spans), and the context a call's job runs in so that a merge it makes is told of in that call's context."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["MergeWatch"]

logger = logging.getLogger("mcpkit.remember")


class MergeWatch:
    """Told of each merge step a call's job makes (start and end in ns, whether more is left), on the worker thread
    in the call's context, for the calls made while ``wanted()`` (a span records, say: the others pay one check)."""

    def __init__(self) -> None:
        self._watch: Callable[[int, int, bool], None] | None = None
        self._wanted: Callable[[], bool] = bool

    def set(self, watch: Callable[[int, int, bool], None], wanted: Callable[[], bool]) -> None:
        self._watch, self._wanted = watch, wanted

    def job(self, call: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """``call(*args)`` as the worker thread should run it: in a copy of this context while a merge is wanted."""
        if self._watch is not None and self._wanted():
            return contextvars.copy_context().run, (call, *args)
        return call, args

    def told(self, where: object, started: int, ended: int, more: bool) -> None:
        """Tell the watch of a merge step made; a watch that fails is logged (the merge, and the write, stand)."""
        if self._watch is None:
            return
        try:
            self._watch(started, ended, more)
        except Exception:
            logger.exception("Telling the telemetry of a search index merge of %s failed", where)
