"""Where values came from, as ``self.remember`` reports them: ``Info``, the source filters and trust, ages."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, NamedTuple

from mcpkit_storage import SOURCES, TRUST, Provenance, RememberInvalidError, Source

__all__ = ["Info", "age_text", "info_of", "source_of", "wanted"]


class Info(NamedTuple):
    """A kept value with where it came from and when (``self.remember.info(key)``; docs/provenance.md).

    ``source`` is ``user``, ``tool``, ``model``, ``import`` or ``external``; ``at`` when what the value says
    happened (by default when it was written); ``created_at`` when its key was first written (None: unknown, written
    before stores kept it); ``updated_at`` when it was written; ``expires_at`` its deadline (None: none). ``app``,
    ``tool``, ``client``, ``client_version``, ``session`` (a hash) and ``era`` (the protocol version) say who wrote
    it. Every field but ``value``, ``created_at``, ``updated_at`` and ``expires_at`` is None for a value written
    before mcpkit kept provenance.
    """

    value: Any
    source: Source | None
    at: float | None
    created_at: float | None
    updated_at: float | None
    expires_at: float | None
    app: str | None
    tool: str | None
    client: str | None
    client_version: str | None
    session: str | None
    era: str | None


def info_of(
    value: Any,
    provenance: Provenance | None,
    created_at: float | None,
    updated_at: float | None,
    expires_at: float | None,
) -> Info:
    """The ``Info`` of a value first written at ``created_at``, last at ``updated_at``, with ``provenance`` (None: not
    kept)."""
    if provenance is None:
        return Info(value, None, None, created_at, updated_at, expires_at, None, None, None, None, None, None)
    source, at, app, tool, client, client_version, session, era = provenance
    return Info(value, source, at, created_at, updated_at, expires_at, app, tool, client, client_version, session, era)


def age_text(seconds: float) -> str:
    """How old something is, in words a model reads at a glance: ``just now``, ``5 minutes``, ``3 days``."""
    for size, unit in ((86_400 * 365, "year"), (86_400, "day"), (3_600, "hour"), (60, "minute")):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return "just now"


def wanted(sources: object, min_trust: object) -> frozenset[str | None] | None:
    """The sources a ``list`` or ``search`` keeps (None: every value, its source known or not)."""
    if sources is None and min_trust is None:
        return None
    wanted = set(SOURCES)
    if sources is not None:
        if isinstance(sources, str) or not isinstance(sources, Collection) or not all(s in TRUST for s in sources):
            raise RememberInvalidError(f"sources is a list of {', '.join(SOURCES)}; not {sources!r:.60}.")
        wanted &= set(sources)
    if min_trust is not None:
        if min_trust not in TRUST:
            raise RememberInvalidError(f"min_trust is one of {', '.join(SOURCES)}; not {min_trust!r:.40}.")
        wanted = {source for source in wanted if TRUST[source] >= TRUST[min_trust]}
    return frozenset(wanted)


def source_of(provenance: Provenance | None) -> str | None:
    return None if provenance is None else provenance.source
