"""``mcpkit remember history``: a key's change history as an operator reads it, values left out unless asked for."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mcpkit import iso_time

from ..base import Place
from ..sealing import Keyring
from ..stores import Store
from ..vault import Vault, Version, versions_key, versions_of

__all__ = ["history_lines", "key_history"]


async def key_history(store: Store, keyring: Keyring, user_id: str, bucket: str, key: str, now: float) -> list[Version]:
    """The versions of ``key`` in the user's ``bucket`` (``user``: their user scope), oldest first."""
    vault = Vault(store, keyring)
    found = await vault.read(Place(json.dumps(["u", user_id]), bucket), versions_key(key), now)
    return [] if found is None else versions_of(found.value, now)


def history_lines(versions: Sequence[Version], *, values: bool) -> list[str]:
    """One line per version: when, the event, its source and who wrote it; its value only with ``values``."""
    lines = []
    for version in versions:
        when = "unknown time" if version.written_at is None else iso_time(version.written_at)
        fields = [when, version.event]
        kept = version.provenance
        if kept is not None:
            fields.append(f"source={kept.source}")
            if kept.at is not None and kept.at != version.written_at:
                fields.append(f"at={iso_time(kept.at)}")
            fields += [f"{name}={part}" for name, part in (("app", kept.app), ("tool", kept.tool)) if part]
            if kept.client:
                fields.append(f"client={kept.client} {kept.client_version or ''}".rstrip())
            if kept.era:
                fields.append(f"era={kept.era}")
        if version.expires_at is not None:
            fields.append(f"expires={iso_time(version.expires_at)}")
        if values and version.value is not None:
            fields.append("value=" + json.dumps(version.value, ensure_ascii=False))
        lines.append("  ".join(fields))
    return lines
