"""The export format, version 1: JSON Lines — a header, one record per remembered value, an end record.

docs/portability.md describes it and ``schema.json`` (beside this module) is its JSON Schema. A value's record
carries its owner, bucket, key, value, time left to live, write time, provenance and event time; conversations and
context blocks are the
values of their plugins' namespaces (``conversations.``, ``history.``, ``blocks.``, ``context.``), exported and
imported alike.
"""

from __future__ import annotations

import base64
import json
import math
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

import pydantic_core

from ..base import MAX_KEY_LENGTH, SCOPES, RememberInvalidError, check_key, is_internal_key
from ..sealing import SOURCES, Provenance, is_event_time, origin_bytes, provenance_of, seal_meta
from ..vault import EVENTS, VERSIONS_KEY, shifted_rows

__all__ = ["FORMAT", "FORMAT_VERSION", "ExportFileError", "Item", "item_of", "record_of", "schema", "scope_of"]

#: The name every header carries, and the newest version this mcpkit writes and reads.
FORMAT = "mcpkit-memory"
FORMAT_VERSION = 1

_IDENTITY_KINDS = {"u": 2, "s": 2, "g": 1}
_SCOPES = frozenset(SCOPES)


class ExportFileError(ValueError):
    """An export file that cannot be imported: which line, what is wrong with it, and what to do."""

    def __init__(self, line: int, problem: str, imported: int = 0) -> None:
        after = f" {imported} values before it were imported, each whole." if imported else " Nothing was imported."
        super().__init__(f"line {line}: {problem}.{after}")
        self.line, self.problem, self.imported = line, problem, imported


#: The fields of a record's ``provenance`` object besides ``source``: who wrote the value (``Provenance``'s).
_ORIGIN = ("app", "tool", "client", "client_version", "session", "era")


class Item(NamedTuple):
    """One value of an export file, checked: where it goes, what it is, how long it has left (None: no deadline),
    and its sealed provenance (``seal_meta``'s: the record's own, or source ``import`` for a record without one)."""

    identity: list[str]
    bucket: str
    key: str
    value_json: bytes
    ttl: float | None
    updated: float | None
    indexed: bool
    meta: bytes
    created: float | None = None


def scope_of(bucket: str) -> tuple[str, str]:
    """A bucket's namespace (``""`` for remember's own) and scope (user, session, tool, global; ``other`` for none),
    read from its name alone, so an export says the same whichever plugins the exporting process imported."""
    first, dot, rest = bucket.partition(".")
    if first in _SCOPES:
        return "", first
    second = rest.partition(".")[0]
    if dot and second in _SCOPES:
        return first + ".", second
    return "", "other"


def record_of(
    identity: str,
    bucket: str,
    key: str,
    value_json: bytes,
    expires_at: float | None,
    written_at: float | None,
    *,
    indexed: bool,
    now: float,
    provenance: Provenance | None = None,
    created: float | None = None,
) -> bytes:
    """A value's record line (without its newline). ``provenance`` None: not recorded (written before mcpkit kept it,
    or by a plugin that keeps none); its ``at`` is the event time (when written, unless the writer said otherwise).
    ``created``: when the key was first written (the store's ``Entry.created``; None: unknown)."""
    namespace, scope = scope_of(bucket)
    record: dict[str, Any] = {
        "type": "value",
        "owner": _owner(identity),
        "scope": scope,
        "namespace": namespace,
        "bucket": bucket,
        "key": key,
        "ttl": None if expires_at is None else round(max(expires_at - now, 0.0), 6),
        "created": created,
        "updated": written_at,
        "indexed": indexed,
        "provenance": None if provenance is None else _provenance_object(provenance),
        "at": None if provenance is None else provenance.at,
    }
    return pydantic_core.to_json(record)[:-1] + b',"value":' + value_json + b"}"  # the value's JSON as it was kept


@lru_cache(maxsize=1024)
def _owner(identity: str) -> Any:
    """An identity's parts, as a record's ``owner`` writes them (cached: a store's values have a few owners; the
    record is encoded at once, and nothing changes it)."""
    return json.loads(identity)


def item_of(record: dict[str, Any], shift: tuple[float, float] | None = None) -> Item:
    """The value a ``value`` record holds; ValueError saying which field is wrong. ``shift``: (by, now), a change
    history's deadlines moved ``by`` seconds, none past the record's own (its ttl from ``now``; ``shifted_rows``)."""
    owner = record.get("owner")
    if not (
        isinstance(owner, list)
        and owner
        and all(isinstance(part, str) for part in owner)
        and _IDENTITY_KINDS.get(owner[0]) == len(owner)
    ):
        raise ValueError('its "owner" is not ["u", USER_ID], ["s", SESSION_ID] or ["g"]')
    bucket, key = record.get("bucket"), record.get("key")
    if not isinstance(bucket, str) or not bucket or not isinstance(key, str):
        raise ValueError('its "bucket" or "key" is missing or not text')
    _check_bucket(bucket)
    _check_key(key)
    if "value" not in record:
        raise ValueError('it has no "value"')
    ttl, updated, created = record.get("ttl"), record.get("updated"), record.get("created")
    for name, number in (("ttl", ttl), ("created", created), ("updated", updated)):
        if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
            raise ValueError(f'its "{name}" is not a number')
        if number is not None and (not math.isfinite(number) or number < 0):
            raise ValueError(f'its "{name}" is negative or not finite')
    indexed = record.get("indexed", False)
    if not isinstance(indexed, bool):
        raise ValueError('its "indexed" is not true or false')
    if key.startswith(VERSIONS_KEY):
        _check_history(record["value"])
        indexed = False  # a key's change history never enters the search index
        if shift is not None:  # on the rows decoded here: encoded once, below
            by, now = shift
            shifted_rows(record["value"], by, None if ttl is None else now + ttl)
    value_json = pydantic_core.to_json(record["value"])
    return Item(owner, bucket, key, value_json, ttl, updated, indexed, _meta_of(record), created)


def _check_key(key: str) -> None:
    """A record's key is one the API could write, or a key's change history (``VERSIONS_KEY`` and such a key): a
    crafted file writes no other internal entry (a vector shard, a future family) and no key ``check_key`` refuses."""
    caller_key = key.removeprefix(VERSIONS_KEY)
    if is_internal_key(caller_key):
        raise ValueError(
            "its key is an internal entry's (only a key's change history is exported): the file was not written "
            "by mcpkit export, or was changed"
        )
    try:
        check_key(caller_key)
    except RememberInvalidError:  # its message shows the key, which an import's errors never do
        raise ValueError(
            f"its key is not one a tool could write (empty, longer than {MAX_KEY_LENGTH} characters, or with control "
            "characters): the file was not written by mcpkit export, or was changed"
        ) from None


def _check_bucket(bucket: str) -> None:
    """A record's bucket is one the API names: a scope (global, user, session, tool or tool.NAME) after a namespace or
    none, and nothing else (a tool's name may hold ``:``, as a resource's bucket does; nothing else may)."""
    if not _api_bucket(bucket):
        raise ValueError(
            'its "bucket" is not one the API names ([NAMESPACE.]global, user, session, tool or tool.NAME, without '
            "control characters, and ':' only in a tool's name): the file was not written by mcpkit export, or was "
            "changed"
        )


@lru_cache(maxsize=1024)
def _api_bucket(bucket: str) -> bool:
    """``_check_bucket``'s test (cached: a file's records come from a few buckets)."""
    namespace, scope = scope_of(bucket)
    return not (
        scope == "other"
        or ":" in namespace + scope
        or (scope != "tool" and ":" in bucket)
        or any(unicodedata.category(char) == "Cc" for char in bucket)
    )


def _check_history(rows: object) -> None:
    """A key's change history as ``versions_of`` reads it: a list of [event, value JSON or null, written at, deadline
    or null, sealed provenance (base64, or empty)], each part of the kind it must be; ValueError naming the row."""
    if not isinstance(rows, list):
        raise ValueError("its value, a key's change history, is not a list of versions")
    for number, row in enumerate(rows, 1):
        problem = _history_row_problem(row)
        if problem is not None:
            raise ValueError(
                f"version {number} of its change history {problem}: the file was not written by mcpkit export, or "
                "was changed"
            )


def _history_row_problem(row: object) -> str | None:
    if not isinstance(row, list) or len(row) != 5:
        return "is not a list of five parts [event, value, written at, deadline, provenance]"
    event, value, written, deadline, meta = row
    if event not in EVENTS:
        return f"has an event that is not one of {', '.join(EVENTS)}"
    if value is not None:
        if not isinstance(value, str):
            return "has a value that is not JSON text or null"
        if not _is_json(value):
            return "has a value that is not JSON text or null"
    for number in (written, deadline) if deadline is not None else (written,):
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            return "has a time (written at, deadline) that is not a finite number"
    if meta is None or meta == "":
        return None
    if not isinstance(meta, str):
        return "has a provenance that is not base64 text"
    if not _decodes(meta):
        return "has a provenance that does not decode"
    return None


def _is_json(text: str) -> bool:
    """Whether ``text`` is JSON as ``json.loads`` reads it (pydantic_core's parser first: several times faster)."""
    try:
        pydantic_core.from_json(text)
    except (ValueError, TypeError):  # TypeError: a str holding a lone surrogate (``json.loads`` reads it)
        try:
            json.loads(text)
        except ValueError:
            return False
    return True


@lru_cache(maxsize=256)
def _decodes(meta: str) -> bool:
    """Whether a version's sealed provenance (base64) decodes (cached: one writer's versions share it, and whether it
    decodes does not depend on the version's time)."""
    try:
        provenance_of(base64.b64decode(meta, validate=True), 0.0)
    except ValueError:  # binascii.Error and a bad UTF-8 part are ValueErrors
        return False
    return True


def _provenance_object(provenance: Provenance) -> dict[str, Any]:
    return {"source": provenance.source} | {name: getattr(provenance, name) for name in _ORIGIN}


_NO_ORIGIN = (None, None, None, None, None, None)
#: The sealed provenance of a record with none (a change history's, or a value written before provenance was kept).
_NO_PROVENANCE = seal_meta("import", None, origin_bytes(*_NO_ORIGIN))


def _meta_of(record: dict[str, Any]) -> bytes:
    """The sealed provenance of a record: its own source, event time and origin; ``import`` (and no origin) for a
    record without provenance or whose source was not recorded. ValueError saying which field is wrong."""
    at, provenance = record.get("at"), record.get("provenance")
    if at is not None and not is_event_time(at):
        raise ValueError('its "at" is not a time in seconds since the epoch, from 1970 to the year 9999')
    if provenance is None:
        return _NO_PROVENANCE if at is None else seal_meta("import", at, origin_bytes(*_NO_ORIGIN))
    if not isinstance(provenance, dict):
        raise ValueError('its "provenance" is not an object')
    source = provenance.get("source")
    if source is not None and source not in SOURCES:
        raise ValueError(f'its provenance\'s "source" is not one of {", ".join(SOURCES)}')
    origin = [provenance.get(name) for name in _ORIGIN]
    for name, part in zip(_ORIGIN, origin, strict=True):
        if part is not None and not isinstance(part, str):
            raise ValueError(f'its provenance\'s "{name}" is not text')
    return seal_meta(source or "import", None if at is None else float(at), origin_bytes(*origin))


def schema() -> dict[str, Any]:
    """The JSON Schema of one line of an export file (plaintext; a sealed line is ``{"sealed": ...}``)."""
    text = resources.files(__package__).joinpath("schema.json").read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result
