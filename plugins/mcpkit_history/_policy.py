"""``HistoryPolicy``: what one history plugin shares with every call, and the turns its heavy reads take."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from mcpkit import DEFAULT_TURN_TIMEOUT, Clock
from mcpkit_search import Analyzer
from mcpkit_storage import CursorSeal, KeyedLocks, Quota, Scope, TurnTimeoutError, Vault

from ._errors import HistoryBusyError

__all__ = ["MAX_LOAD_BYTES", "MAX_SEARCH_BYTES", "HistoryPolicy", "turn"]

#: What one page of a conversation (``History.page``, ``load_history``) returns at most, in bytes of content.
MAX_LOAD_BYTES = 1024 * 1024
#: What one search within one conversation reads at most, newest messages first, in bytes of content.
MAX_SEARCH_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HistoryPolicy:
    """What one plugin shares with every call: the vault, the clock, the scope and the limits."""

    vault: Vault
    clock: Callable[[], Clock]
    scope: Scope
    max_message_bytes: int
    max_messages: int  # per conversation
    quota: Quota | None  # all of a caller's messages together
    analyzer: Analyzer
    session_ttl: float | None = None  # the longest a session's message lives (nobody reaches it once it ends)
    tree_quota: Quota | None = None  # a caller's conversations (a cleared one's empty tree too, while it lasts)
    max_load_bytes: int = MAX_LOAD_BYTES  # what one page (load_history) returns at most
    max_search_bytes: int = MAX_SEARCH_BYTES  # what one search in one conversation reads at most, newest first
    turn_timeout: float = DEFAULT_TURN_TIMEOUT  # how long a heavy read waits behind the caller's others
    turns: KeyedLocks = field(init=False)  # one caller's heavy reads, one at a time
    cursors: CursorSeal = field(init=False)  # load_history's cursors

    def __post_init__(self) -> None:
        object.__setattr__(self, "turns", KeyedLocks(self.turn_timeout))
        object.__setattr__(self, "cursors", CursorSeal(self.vault.keyring, "history page v1"))


@asynccontextmanager
async def turn(policy: HistoryPolicy, owner: str) -> AsyncIterator[None]:
    """The caller's turn for a heavy read; ``HISTORY_BUSY`` when its earlier ones hold it past ``turn_timeout``."""
    entered = False
    try:
        async with policy.turns.held(owner):
            entered = True
            yield
    except TurnTimeoutError as exc:
        if entered:
            raise
        raise HistoryBusyError(exc.timeout) from None
