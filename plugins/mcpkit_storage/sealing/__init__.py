"""Sealing: the keyring that encrypts values and hashes owners, what a sealed entry holds (and where its value came
from), sealed cursors, and which secrets the store's values were sealed with."""

from ._cursors import CursorSeal
from ._keyring import HEADER_BYTES, LEGACY_VERSION, VERSION, Keyring, UndecryptableError
from ._payload import Payload, pack, peek, unpack, unpack_legacy, utf8
from ._provenance import (
    SOURCES,
    TRUST,
    Provenance,
    Source,
    event_of,
    is_event_time,
    origin_bytes,
    provenance_of,
    seal_meta,
)
from ._secret_watch import HELD_SECONDS, ROTATED_TO, SecretWatch, held_ids, seen_at

__all__ = [
    "HEADER_BYTES",
    "HELD_SECONDS",
    "LEGACY_VERSION",
    "ROTATED_TO",
    "SOURCES",
    "TRUST",
    "VERSION",
    "CursorSeal",
    "Keyring",
    "Payload",
    "Provenance",
    "SecretWatch",
    "Source",
    "UndecryptableError",
    "event_of",
    "held_ids",
    "is_event_time",
    "origin_bytes",
    "pack",
    "peek",
    "provenance_of",
    "seal_meta",
    "seen_at",
    "unpack",
    "unpack_legacy",
    "utf8",
]
