"""Stores: opaque bytes at hashed addresses, with deadlines, quotas, compare-and-set and search postings, behind one
``Store`` interface that every backend (``stores.memory``, ``sqlite``, ``redis``, ``postgres``) implements and
registers as a ``StoreKind``."""

from ._bulk import BulkStore, bulk_writes
from ._kinds import StoreKind, StoreMaker, kind_for_url, register_store, store_kind, store_kinds
from ._redacted import without_password
from ._store import (
    INDEX_BYTES_PER_WORD,
    Address,
    Entry,
    Expectation,
    NarrowingStore,
    NotWholeError,
    Postings,
    Quota,
    QuotaExceededError,
    Ranking,
    Record,
    Store,
    StoreUnavailableError,
    Write,
    charged,
    first_written,
    narrowing,
    swap_each,
)

__all__ = [
    "INDEX_BYTES_PER_WORD",
    "Address",
    "BulkStore",
    "Entry",
    "Expectation",
    "NarrowingStore",
    "NotWholeError",
    "Postings",
    "Quota",
    "QuotaExceededError",
    "Ranking",
    "Record",
    "Store",
    "StoreKind",
    "StoreMaker",
    "StoreUnavailableError",
    "Write",
    "bulk_writes",
    "charged",
    "first_written",
    "kind_for_url",
    "narrowing",
    "register_store",
    "store_kind",
    "store_kinds",
    "swap_each",
    "without_password",
]
