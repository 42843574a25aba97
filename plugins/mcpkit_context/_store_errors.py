"""``StorageErrors``: storage's low-level errors become the errors a client of the context blocks sees."""

from __future__ import annotations

import logging
from types import TracebackType

from mcpkit_storage import (
    INDEX_BYTES_PER_WORD,
    QuotaExceededError,
    RememberStoreUnavailableError,
    StoreUnavailableError,
)

from ._blocks import SearchableBlock
from ._errors import ContextInvalidError

__all__ = ["STORE_ERRORS", "StorageErrors"]

logger = logging.getLogger("mcpkit.context")


class StorageErrors:
    """``with StorageErrors(block):`` turns an unreachable store into ``REMEMBER_STORE_UNAVAILABLE``, and a searchable
    ``block`` past its ``max_entries`` or ``max_bytes`` into ``CONTEXT_INVALID`` saying which."""

    __slots__ = ("block",)

    def __init__(self, block: SearchableBlock | None = None) -> None:
        self.block = block

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            return
        if isinstance(exc, StoreUnavailableError):
            logger.warning("context store unavailable: %s", exc)  # the store's own message, for the operator
            raise RememberStoreUnavailableError(maybe_applied=exc.maybe_applied) from None
        block = self.block
        if block is None or not isinstance(exc, QuotaExceededError):
            return
        if exc.limit == "values":
            raise ContextInvalidError(
                f"The block {block.name!r} holds {block.max_entries:,} entries, its most (max_entries); replace "
                "an entry by its key."
            ) from None
        raise ContextInvalidError(
            f"The block {block.name!r} holds {block.max_bytes:,} bytes of your entries at most (max_bytes; each "
            f"indexed word counts {INDEX_BYTES_PER_WORD} bytes too), and this entry does not fit: replace a long "
            "entry by its key with a shorter one."
        ) from None


#: The mapping of every call but a searchable block's write: one, shared, as it keeps no state.
STORE_ERRORS = StorageErrors()
