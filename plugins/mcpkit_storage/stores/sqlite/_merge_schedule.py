"""``MergeSchedule``: when an SQLite store merges its search index's fresh postings into the term table — a bounded
step after every few changes, larger steps less often during a run of writes told of (``SQLiteStore.bulk``) — and
who is told of each step."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from . import _sqlite_index as index_sql
from ._merge_watch import MergeWatch

__all__ = ["MergeSchedule"]

logger = logging.getLogger("mcpkit.remember")


class MergeSchedule:
    """Counts an SQLite store's changes to its index on the worker thread and merges when they come due:
    ``merge_every`` changes (``BULK_MERGE_EVERY`` while ``bulk`` runs of writes are open), a step of about
    ``MERGE_STEP`` postings (``BULK_MERGE_STEP``), run by ``transaction`` on the connection ``db()`` gives."""

    def __init__(
        self,
        where: object,
        merge_every: int,
        transaction: Callable[..., Any],
        db: Callable[[], sqlite3.Connection],
    ) -> None:
        self._where, self._merge_every, self._transaction, self._db = where, merge_every, transaction, db
        self.changes = 0  # since the last merge
        self.failed = False  # the last merge failed: what it left is merged at the end of a run, or on closing
        self.bulk = 0  # runs of writes told of, not ended yet
        self.watch = MergeWatch()  # an observed vault's merge spans

    def changed(self, count: int) -> None:
        """Count ``count`` changes a call made (after its commit), and take a merge step if one is due."""
        self.changes += count
        if self.changes >= self._due():
            self.merge(step=True)

    @property
    def owed(self) -> bool:
        """Whether changes since the last merge, or a merge that failed, left postings to merge."""
        return bool(self.changes) or self.failed

    def merged(self) -> None:
        """Note that the caller merged everything itself (inside its own transaction)."""
        self.changes, self.failed = 0, False

    def _due(self) -> int:
        return index_sql.BULK_MERGE_EVERY if self.bulk else self._merge_every

    def merge(self, step: bool = False, budget: int | None = None) -> bool:
        """Merge the fresh and stale postings, if there are any: one bounded step (``step``, of about ``budget``
        postings; while more is left, the next change takes the next step), or all of them; whether more is left. A
        failure is logged (the change that called it stands) and tried again when the next merge is due, or at the
        end of a run of writes, or on closing, whichever comes first."""
        self.changes = 0
        if budget is None:
            budget = index_sql.BULK_MERGE_STEP if self.bulk else index_sql.MERGE_STEP
        try:
            if not index_sql.pending(self._db()):
                self.failed = False
                return False
            started, more = time.time_ns(), False
            if not step:
                self._transaction(index_sql.merge, self._db())
            elif more := self._transaction(index_sql.merge_step, self._db(), budget):
                self.changes = self._due()  # more to merge: the next change takes another step
        except sqlite3.Error as exc:
            logger.warning("The search index of %s was not merged (tried again later): %s", self._where, exc)
            self.failed = True
            return False
        self.failed = False
        self.watch.told(self._where, started, time.time_ns(), more)
        return more
