"""``StorageErrors``: storage's low-level errors become the remember errors a client sees, in one place."""

from __future__ import annotations

import logging
from types import TracebackType

from mcpkit_storage import (
    PartialWriteError,
    Place,
    QuotaExceededError,
    RememberConflictError,
    RememberQuotaError,
    RememberStoreUnavailableError,
    StoreUnavailableError,
    TurnTimeoutError,
    Vault,
)

__all__ = ["STORE_ERRORS", "StorageErrors"]

logger = logging.getLogger("mcpkit.remember")


class StorageErrors:
    """``with StorageErrors(key, scope):`` turns an unreachable store, a quota and a turn that never came into
    ``REMEMBER_STORE_UNAVAILABLE``, ``REMEMBER_QUOTA_EXCEEDED`` (naming ``key``, or the key of a batch that did not
    fit) and ``REMEMBER_CONFLICT``."""

    __slots__ = ("key", "place", "scope", "vault", "versioned")

    def __init__(
        self,
        key: str = "",
        scope: str = "",
        vault: Vault | None = None,
        place: Place | None = None,
        *,
        versioned: bool = False,
    ) -> None:
        self.key = key
        self.scope = scope
        # for a quota's message: whether the place keeps vector shards, which count too (asked only then), and
        # whether its keys keep change histories, which count too
        self.vault = vault
        self.place = place
        self.versioned = versioned

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            return
        key: str = self.key
        sharded: bool | None = None
        if isinstance(exc, PartialWriteError):  # one of several values: the error names it
            key, sharded, exc = exc.key, exc.sharded, exc.error
        if isinstance(exc, StoreUnavailableError):
            logger.warning("remember store unavailable: %s", exc)  # the store's own message, for the operator
            raise RememberStoreUnavailableError(maybe_applied=exc.maybe_applied) from None
        if isinstance(exc, QuotaExceededError):
            if sharded is None:
                sharded = self.vault is not None and self.place is not None and self.vault.sharded(self.place)
            versioned = self.versioned
            raise RememberQuotaError(
                key, self.scope, exc.limit, exc.allowed, sharded=sharded, versioned=versioned
            ) from None
        if isinstance(exc, TurnTimeoutError):
            raise RememberConflictError(key, 0, exc.timeout) from None


#: The mapping of a call that names no key or quota (reads, searches, deletes): one, shared, as it keeps no state.
STORE_ERRORS = StorageErrors()
