"""Properties of the stores, for every store, over inputs hypothesis makes up.

Owners, buckets and keys full of ``:`` ``/`` ``%`` ``*`` ``?`` ``[`` ``\\`` quotes and unicode never collide and
never leak into each other; deadlines hold to the last float (present at ``deadline - ε``, gone at the deadline).
Time is passed in: nothing sleeps. Properties of ``Remember`` over these stores are in test_remember_properties.py.

Each example cleans up after itself with ``delete_owner``, and checks that it did, so one store serves every
example of a test and a leftover from one example would show up as a leak in the next.
"""

from __future__ import annotations

import asyncio
import math
import os
import unicodedata
from collections import Counter
from collections.abc import Callable
from unittest.mock import ANY

from hypothesis import given
from hypothesis import strategies as st

from mcpkit_storage.base._values import MAX_KEY_LENGTH, MAX_TTL
from mcpkit_storage.stores._store import Entry, Store
from reliability.figures import Figures
from reliability.properties import (  # the fixtures too: loop, store, base_time
    BOUNDED,
    EXAMPLES,
    base_time_fixture,  # noqa: F401
    hostile_text,
    keys,
    loop_fixture,  # noqa: F401
    near_misses,
    offsets,
    store_fixture,  # noqa: F401
    store_name,
)
from stores import views

# -- strategies ------------------------------------------------------------------------------------------------------

#: Owners: in production a 32-hex-digit hash, here anything but '{' and '}' (the Redis store's hash tags refuse them).
owners = near_misses(3) | hostile_text(min_size=1, max_size=12, exclude="{}")
#: Buckets as the plugin makes them: a scope, or ``tool.<tool name>``, optionally under the ``memory.`` namespace.
buckets = st.builds(
    lambda namespace, base: namespace + base,
    st.sampled_from(["", "memory."]),
    st.sampled_from(["user", "session", "global", "tool"])
    | st.from_regex(r"tool\.[A-Za-z0-9_.\-]{1,12}", fullmatch=True),
)

#: Small changes that make a second, different name which a careless store could mistake for the first:
#: case, SQL LIKE and glob wildcards in place of a character, a separator added, a prefix, NFD.
TWISTS: list[Callable[[str], str]] = [
    str.swapcase,
    lambda s: "_" + s[1:],
    lambda s: "%" + s[1:],
    lambda s: s[:-1] + "%",
    lambda s: "*" + s[1:],
    lambda s: "?" + s[1:],
    lambda s: "[" + s,
    lambda s: s + ":",
    lambda s: ":" + s,
    lambda s: s[:-1],
    lambda s: s + "\\",
    lambda s: unicodedata.normalize("NFD", s),
]


@st.composite
def families(draw: st.DrawFn, names: st.SearchStrategy[str], valid: Callable[[str], bool]) -> list[str]:
    """A name, a few twisted versions of it and maybe an unrelated name: all different, all valid."""
    first = draw(names)
    found = [first, *(twist(first) for twist in draw(st.lists(st.sampled_from(TWISTS), min_size=1, max_size=5)))]
    found += draw(st.lists(names, max_size=1))
    return list(dict.fromkeys(name for name in found if valid(name)))


def valid_owner(owner: str) -> bool:
    return bool(owner) and "{" not in owner and "}" not in owner


def valid_key(key: str) -> bool:
    return 0 < len(key) <= MAX_KEY_LENGTH and key.isprintable()


Address = tuple[str, str, str]


@st.composite
def layouts(draw: st.DrawFn) -> dict[Address, tuple[bytes, float | None]]:
    """Families of owners and keys, a few buckets, and entries at addresses that share parts."""
    some_owners = draw(families(owners, valid_owner))
    some_buckets = draw(st.lists(buckets, min_size=1, max_size=3, unique=True))
    some_keys = draw(families(keys, valid_key))
    addresses = st.tuples(st.sampled_from(some_owners), st.sampled_from(some_buckets), st.sampled_from(some_keys))
    deadlines = st.none() | st.floats(min_value=1.0, max_value=MAX_TTL)
    chosen = draw(st.lists(addresses, min_size=1, max_size=10, unique=True))
    return {address: (draw(st.binary(max_size=48)), draw(deadlines)) for address in chosen}


# -- stores ----------------------------------------------------------------------------------------------------------


async def layout_holds(store: Store, now: float, entries: dict[Address, tuple[bytes, float | None]]) -> Counter[str]:
    """Write every entry, then read every address in the cross product; delete a bucket, a key, every owner."""
    seen: Counter[str] = Counter()
    # Each value names its address, so a value read elsewhere is recognised as a leak, not just "wrong".
    model = {a: (repr(a).encode() + b"\n" + data, None if d is None else now + d) for a, (data, d) in entries.items()}
    owned = {o for o, _, _ in model} | {"x" + o for o, _, _ in model}  # plus owners nobody wrote to
    places = {(o, b) for o, b, _ in model} | {(o, b) for o in owned for _, b, _ in model}
    for (owner, bucket, key), (data, deadline) in model.items():
        await store.put(owner, bucket, key, data, deadline, now)

    async def check() -> None:
        every_key = {k for _, _, k in model}
        for owner, bucket in places:
            listed = await views.keys(store, owner, bucket, now)
            expected_keys = sorted(k for o, b, k in model if (o, b) == (owner, bucket))
            seen["checks"] += 1
            if listed != expected_keys:
                seen["leaks" if set(listed) - set(expected_keys) else "lost"] += 1
            for key in every_key:
                got = await store.get(owner, bucket, key, now)
                expected = model.get((owner, bucket, key))
                want = None if expected is None else Entry(*expected, ANY)  # Redis reads ``created`` only by scan
                seen["checks"] += 1
                if got != want:
                    ours = got is None or got.data.startswith(repr((owner, bucket, key)).encode() + b"\n")
                    seen["lost" if ours else "leaks"] += 1
                if await views.exists(store, owner, bucket, key, now) != (want is not None):
                    seen["leaks" if want is None else "lost"] += 1

    await check()
    (owner, bucket, key) = next(iter(model))
    gone = sum(1 for o, b, _ in model if (o, b) == (owner, bucket))
    if await store.delete_bucket(owner, bucket, now) != gone:
        seen["lost"] += 1
    model = {a: v for a, v in model.items() if a[:2] != (owner, bucket)}
    await check()
    if model:
        address = next(iter(model))
        if not await store.delete(*address, now):
            seen["lost"] += 1
        del model[address]
        await check()
    for owner in owned:
        if await store.delete_owner(owner) != sum(1 for o, _, _ in model if o == owner):
            seen["lost"] += 1
    model = {}
    await check()
    return seen


def test_addresses_never_collide_or_leak_whatever_their_characters(
    store: Store, loop: asyncio.Runner, base_time: float, figures: Figures
) -> None:
    totals: Counter[str] = Counter()

    @BOUNDED
    @given(entries=layouts())
    def property_holds(entries: dict[Address, tuple[bytes, float | None]]) -> None:
        seen = loop.run(layout_holds(store, base_time, entries))
        totals.update(seen, inputs=1)
        assert (seen["leaks"], seen["lost"]) == (0, 0), (seen, entries)

    property_holds()
    figures.record(
        inputs=totals["inputs"],
        leaks=totals["leaks"],
        lost=totals["lost"],
        detail=f"{store_name(store)}: hypothesis wrote {totals['inputs']} layouts of up to 10 entries at addresses "
        "sharing owners, buckets and keys (':' '/' '%' '*' '?' '[' '\\' quotes, unicode; 256-character keys), then "
        f"made {totals['checks']} reads across every owner x bucket x key, around delete_bucket, delete and "
        "delete_owner.",
    )
    assert totals["inputs"] >= EXAMPLES // 2


async def purge_takes_exactly_the_expired(store: Store, now: float, chosen: list[float]) -> Counter[str]:
    """purge_expired at one of the deadlines deletes exactly what expired by then; scan shows the rest intact."""
    seen: Counter[str] = Counter()
    owner, bucket = "purge:/%*?[\\ü", "tool.purge"
    model = {f"k{i}": now + offset for i, offset in enumerate(chosen)}
    for key, deadline in model.items():
        await store.put(owner, bucket, key, key.encode(), deadline, now)
    moment = sorted(model.values())[len(model) // 2]
    expired = {key for key, deadline in model.items() if deadline <= moment}
    seen["checks"] += 2
    seen["wrong expiry"] += await store.purge_expired(moment) != len(expired)
    left = {(r.key, r.entry) async for r in store.scan() if (r.owner, r.bucket) == (owner, bucket)}
    seen["wrong expiry"] += left != {(k, Entry(k.encode(), d, now)) for k, d in model.items() if k not in expired}
    seen["lost"] += await store.delete_owner(owner) != len(model) - len(expired)
    return seen


async def deadlines_hold(store: Store, now: float, chosen: list[float]) -> Counter[str]:
    """Entries with the given offsets, read at each deadline and the float just before it, in time order."""
    seen = await purge_takes_exactly_the_expired(store, now, chosen)
    owner, bucket = "owner:/%*?[\\ü", "tool.deadlines"
    model = {f"k{i}:{offset!r}": now + offset for i, offset in enumerate(chosen)}
    for key, deadline in model.items():
        await store.put(owner, bucket, key, key.encode(), deadline, now)
    moments = sorted({t for d in model.values() for t in (math.nextafter(d, -math.inf), d)})
    for moment in moments:  # forward only: reading at a later time may delete what expired by then
        live = {key for key, deadline in model.items() if deadline > moment}
        seen["checks"] += 1
        if await views.keys(store, owner, bucket, moment) != sorted(live):
            seen["lost"] += 1
        for key, deadline in model.items():
            got = await store.get(owner, bucket, key, moment)
            present = await views.exists(store, owner, bucket, key, moment)
            want = Entry(key.encode(), deadline, ANY) if key in live else None
            seen["checks"] += 1
            if got != want or present != (want is not None):
                seen["wrong expiry"] += 1
    last = moments[-1]
    for key in model:  # all past their deadline now: gone for delete and compare-and-set too
        fresh = b"fresh " + os.urandom(8).hex().encode()  # every write's bytes are new, as sealed values are
        if await store.delete(owner, bucket, key, last) or not await store.swap(
            owner, bucket, key, None, fresh, None, last
        ):
            seen["wrong expiry"] += 1
    if await store.delete_owner(owner) != len(model):
        seen["lost"] += 1
    return seen


def test_every_entry_is_there_until_the_float_before_its_deadline_and_gone_at_it(
    store: Store, loop: asyncio.Runner, base_time: float, figures: Figures
) -> None:
    totals: Counter[str] = Counter()

    @BOUNDED
    @given(chosen=st.lists(offsets, min_size=1, max_size=5))
    def property_holds(chosen: list[float]) -> None:
        seen = loop.run(deadlines_hold(store, base_time, chosen))
        totals.update(seen, inputs=1)
        assert (seen["wrong expiry"], seen["lost"]) == (0, 0), (seen, chosen)

    property_holds()
    figures.record(
        inputs=totals["inputs"],
        leaks=0,
        lost=totals["lost"] + totals["wrong expiry"],
        detail=f"{store_name(store)}: hypothesis chose {totals['inputs']} sets of deadlines (1 ms to 100 years from "
        f"now, ties and fractions); {totals['checks']} reads at each deadline and at the float just before it, in "
        "time order: present before, gone at the deadline (get, exists, keys, delete, swap); purge_expired at a "
        "deadline deletes exactly what expired by then and scan shows the rest intact.",
    )
    assert totals["inputs"] >= EXAMPLES // 2
