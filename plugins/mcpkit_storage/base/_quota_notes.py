"""Quotas a server records in its store as notes, so that commands given only the store (``import``) hold them."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..stores import Quota, Store

__all__ = ["QUOTA_NOTE", "record_quotas", "recorded_quotas"]

#: A quota's note is this and its namespace (``""`` for remember's own buckets, ``memory.`` for the model's notes).
QUOTA_NOTE = "quota:"


async def record_quotas(store: Store, quotas: Mapping[str, Quota | None]) -> None:
    """Keep each namespace's quota per owner and bucket as a note of ``store`` (None: that namespace has none)."""
    notes = await store.notes()
    for namespace, quota in quotas.items():
        name = QUOTA_NOTE + namespace
        text = None if quota is None else json.dumps({"values": quota.values, "bytes": quota.bytes})
        if notes.get(name) != text:  # a restart with the same settings writes nothing
            await store.note(name, text)


def recorded_quotas(notes: Mapping[str, str]) -> dict[str, Quota]:
    """The quotas recorded in a store's ``notes``, by namespace; a note that is not one a server wrote is skipped."""
    quotas: dict[str, Quota] = {}
    for name, text in notes.items():
        if not name.startswith(QUOTA_NOTE):
            continue
        try:
            fields = json.loads(text)
            values, most = fields["values"], fields["bytes"]
        except (ValueError, TypeError, KeyError):
            continue
        if all(limit is None or (type(limit) is int and limit >= 0) for limit in (values, most)):
            quotas[name.removeprefix(QUOTA_NOTE)] = Quota(values, most)
    return quotas
