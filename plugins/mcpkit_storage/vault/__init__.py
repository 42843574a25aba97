"""The ``Vault``: a store behind sealing, and what its reads find."""

from ._found import Found, Inspected, Observed, found, newer
from ._observed import ObservedVault, key_hash
from ._offloaded import read_many_in_thread
from ._vault import Vault
from ._versions import (
    EVENTS,
    VERSIONS_KEY,
    Event,
    Version,
    record,
    same_history,
    settled_json,
    shifted_rows,
    swap_versioned,
    versions_key,
    versions_of,
    write_many_versioned,
    write_versioned,
)
from ._writer import PartialWriteError, Sealed, Swap

__all__ = [
    "EVENTS",
    "VERSIONS_KEY",
    "Event",
    "Found",
    "Inspected",
    "Observed",
    "ObservedVault",
    "PartialWriteError",
    "Sealed",
    "Swap",
    "Vault",
    "Version",
    "found",
    "key_hash",
    "newer",
    "read_many_in_thread",
    "record",
    "same_history",
    "settled_json",
    "shifted_rows",
    "swap_versioned",
    "versions_key",
    "versions_of",
    "write_many_versioned",
    "write_versioned",
]
