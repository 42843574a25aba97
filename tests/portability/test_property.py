"""A property over random values and times left to live: whatever JSON a caller kept, with whatever deadline, comes
back from an export the same, with the same time left, sealed or not (memory store to memory store)."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit_storage import Keyring, Place, Vault
from mcpkit_storage.portability import SealingKey, export_memory, import_memory
from mcpkit_storage.stores.memory._memory_store import MemoryStore

KEYRING, ROTATED = Keyring(["property-secret-A-0123456789abcdef"]), Keyring(["property-secret-B-0123456789abcdef"])
NOW = 1_800_000_000.0
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
#: The characters ``str.isprintable`` takes: no control, format, surrogate, private or unassigned ones, and of the
#: separators the space alone.
PRINTABLE = st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")) | st.just(" ")
ENTRY = st.tuples(
    st.sampled_from([["u", "nour"], ["u", "sam:🌲"], ["s", "session-1"], ["g"]]),
    st.sampled_from(["user", "tool.mem", "history.user", "context.user.notes"]),
    # a key a tool could write (check_key's): printable, made so (filtering any text threw most away, and
    # Hypothesis's health check then failed the test for some seeds)
    st.text(PRINTABLE, min_size=1, max_size=20).filter(str.isprintable),
    JSON,
    st.none() | st.floats(min_value=0.001, max_value=10 * 365 * 86400.0),
)


async def round_trip(entries: list[tuple[list[str], str, str, Any, float | None]], sealed: bool) -> None:
    source, target = MemoryStore(), MemoryStore()
    await source.open()
    await target.open()
    vault, wanted = Vault(source, KEYRING), {}
    for owner, bucket, key, value, ttl in entries:
        place = Place(json.dumps(owner), bucket, owner[0] == "s")
        await vault.write(place, key, json.dumps(value), None if ttl is None else NOW + ttl, NOW - 5, None)
        wanted[(place, key)] = (value, ttl)
    key = SealingKey.passphrase("a long enough passphrase") if sealed else None
    out = io.BytesIO()
    await export_memory(source, KEYRING, out, key=key, plaintext=not sealed, now=NOW)
    later = NOW + 1000
    report = await import_memory(
        target, ROTATED, io.BytesIO(out.getvalue()), key=key, plaintext=not sealed, allow_global=True, now=later
    )
    assert report.imported == len(wanted)
    back = Vault(target, ROTATED)
    for (place, key_name), (value, ttl) in wanted.items():
        found = await back.read(place, key_name, later)
        assert found is not None
        assert json.dumps(found.value) == json.dumps(value)
        assert found.updated_at == NOW - 5
        if ttl is None:
            assert found.expires_at is None
        else:
            assert found.expires_at is not None
            assert math.isclose(found.expires_at - later, ttl, abs_tol=1e-6)  # the time left, not a new one


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(ENTRY, max_size=8), sealed=st.booleans())
def test_any_values_and_times_left_come_back_the_same(
    entries: list[tuple[list[str], str, str, Any, float | None]], sealed: bool
) -> None:
    anyio.run(round_trip, entries, sealed)
