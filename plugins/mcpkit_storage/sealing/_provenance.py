"""``Provenance``: where a remembered value came from, sealed with it: its source, when it happened, who wrote it."""

from __future__ import annotations

import math
import struct
from functools import lru_cache
from typing import Literal, NamedTuple

__all__ = [
    "META_MARK",
    "SOURCES",
    "TRUST",
    "Provenance",
    "Source",
    "event_of",
    "is_event_time",
    "origin_bytes",
    "provenance_of",
    "seal_meta",
]

Source = Literal["user", "tool", "model", "external", "import"]

#: Where a value can come from, most trusted first.
SOURCES: tuple[Source, ...] = ("user", "tool", "model", "import", "external")

#: How far each source is trusted (higher: more): the caller said it, a tool computed it, a model chose to keep it,
#: a file brought it in, or it was derived from content fetched from elsewhere.
TRUST: dict[str, int] = {"user": 4, "tool": 3, "model": 2, "import": 1, "external": 0}

_CODES = {source: code for code, source in enumerate(SOURCES, start=1)}
_META_VERSION = 1
_FIXED = struct.Struct(">BBd")  # meta version, source code, event time (NaN: when written)
_LENGTH = struct.Struct(">H")
_SECTION_LENGTH = struct.Struct(">I")
#: The last bytes before the vector (or the end) of a plaintext whose value has a meta section (``_payload``).
META_MARK = b"\xffp"
_FIELDS = 6  # app, tool, client name, client version, session (hashed), protocol era


#: The first moment past the calendar (year 10000): an event time at or after it could not be shown as a date.
_PAST_THE_CALENDAR = 253402300800.0


def is_event_time(at: object) -> bool:
    """Whether ``at`` is an event time a value may carry: seconds since the epoch, from the epoch to the year 9999
    (a time past it would break every date shown of it: a search's ``happened_at``, ``mcpkit remember history``)."""
    return isinstance(at, int | float) and not isinstance(at, bool) and 0.0 <= at < _PAST_THE_CALENDAR


class Provenance(NamedTuple):
    """Where a value came from (``self.remember.info(key)``); every field is sealed with the value.

    ``source``: ``user``, ``tool``, ``model``, ``import`` or ``external`` (None: written before mcpkit kept it).
    ``at``: when what the value says happened, seconds since the epoch (by default: when it was written).
    ``session`` is a hash of the session id, never the id itself.
    """

    source: Source | None
    at: float | None
    app: str | None
    tool: str | None
    client: str | None
    client_version: str | None
    session: str | None
    era: str | None


def _text(part: str | None) -> bytes:
    data = b"" if part is None else part.encode("utf-8", "surrogatepass")[:0xFFFF]
    return _LENGTH.pack(len(data)) + data


@lru_cache(maxsize=1024)
def origin_bytes(
    app: str | None,
    tool: str | None,
    client: str | None,
    client_version: str | None,
    session: str | None,
    era: str | None,
) -> bytes:
    """The sealed form of who wrote a value (cached: a call writes with the same origin again and again)."""
    return b"".join(_text(part) for part in (app, tool, client, client_version, session, era))


def seal_meta(source: Source, at: float | None, origin: bytes) -> bytes:
    """The meta section of a payload as ``pack`` appends it: the source, the event time (None: when written) and
    ``origin_bytes``, then its length and ``META_MARK``. The same bytes for every write of one call with no ``at``."""
    meta = _FIXED.pack(_META_VERSION, _CODES[source], math.nan if at is None else at) + origin
    return meta + _SECTION_LENGTH.pack(len(meta)) + META_MARK


def event_of(meta: bytes, written_at: float) -> tuple[float, Source | None]:
    """A meta section's event time (``written_at`` when it has none) and source (None: none, or no meta section),
    without reading the rest of it: what the search index keeps of a value's provenance (``index.facet_words``)."""
    if len(meta) < _FIXED.size or meta[0] != _META_VERSION:
        return written_at, None
    _, code, at = _FIXED.unpack_from(meta)
    return (written_at if at != at else at), (SOURCES[code - 1] if 1 <= code <= len(SOURCES) else None)


def provenance_of(meta: bytes, written_at: float | None) -> Provenance | None:
    """The provenance a meta section holds (None: none, as for values written before it was kept, or unknown); the
    bytes after it (its length and mark, when given whole) are not read."""
    if len(meta) < _FIXED.size or meta[0] != _META_VERSION:
        return None
    _, code, at = _FIXED.unpack_from(meta)
    parts: list[str | None] = []
    offset = _FIXED.size
    for _ in range(_FIELDS):
        if offset + _LENGTH.size > len(meta):
            raise ValueError("sealed provenance is truncated")
        (length,) = _LENGTH.unpack_from(meta, offset)
        offset += _LENGTH.size
        parts.append(meta[offset : offset + length].decode("utf-8", "surrogatepass") or None)
        offset += length
    source = SOURCES[code - 1] if 1 <= code <= len(SOURCES) else None
    app, tool, client, client_version, session, era = parts
    return Provenance(source, written_at if at != at else at, app, tool, client, client_version, session, era)
