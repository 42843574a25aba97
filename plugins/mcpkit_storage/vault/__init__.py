"""The ``Vault``: a store behind sealing, and what its reads find."""

from ._found import Found, Observed, found, newer
from ._observed import ObservedVault, key_hash
from ._offloaded import read_many_in_thread
from ._vault import Vault
from ._writer import PartialWriteError

__all__ = [
    "Found",
    "Observed",
    "ObservedVault",
    "PartialWriteError",
    "Vault",
    "found",
    "key_hash",
    "newer",
    "read_many_in_thread",
]
