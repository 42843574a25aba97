"""Properties of the stores and of ``Remember``, for every store, over inputs hypothesis makes up.

Owners, buckets and keys full of ``:`` ``/`` ``%`` ``*`` ``?`` ``[`` ``\\`` quotes and unicode never collide and
never leak into each other; deadlines hold to the last float (present at ``deadline - ε``, gone at the deadline);
and through ``Remember``, two callers whose ids differ only in escaping (or carry the JSON framing ``"]``) each
read only their own values. Time is passed in (stores) or moved by hand (``ManualClock``): nothing sleeps.

Each example cleans up after itself with ``delete_owner`` / ``forget_all``, and checks that it did, so one store
serves every example of a test and a leftover from one example would show up as a leak in the next.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mcpkit import Caller, ManualClock
from mcpkit_remember import SCOPES, Remember, Scope
from mcpkit_remember._keyring import Keyring
from mcpkit_remember._memory_store import MemoryStore
from mcpkit_remember._redis_store import RedisStore
from mcpkit_remember._remember import RememberPolicy
from mcpkit_remember._sqlite_store import SQLiteStore
from mcpkit_remember._store import Entry, Store
from mcpkit_remember._values import MAX_KEY_LENGTH, MAX_TTL
from mcpkit_remember._vault import Vault
from reliability.figures import Figures

SECRET = "store-properties-secret-0123456789"
EXAMPLES = 50
BOUNDED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: The characters that break naive layouts: separators, escapes, globs, JSON framing, lookalike unicode.
HOSTILE = list(":/%*?[]\\\"'|., \u00e9e\u0301\u00fc\u65e5\U0001f600\u212bAa0")


# -- strategies ------------------------------------------------------------------------------------------------------


def hostile_text(*, min_size: int, max_size: int, exclude: str = "") -> st.SearchStrategy[str]:
    """Text mostly made of HOSTILE characters, with any other printable character now and then."""
    others = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))
    alphabet = st.sampled_from([c for c in HOSTILE if c not in exclude]) | others.filter(lambda c: c not in exclude)
    return st.text(alphabet, min_size=min_size, max_size=max_size)


#: Short strings over a tiny alphabet: near-misses (``a%`` and ``ab``, ``A`` and ``a``, ``:`` splits) come up often.
TIGHT = list(':/%_*?[]\\"aAé')


def near_misses(max_size: int) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from(TIGHT), min_size=1, max_size=max_size)


#: Owners: in production a 32-hex-digit hash, here anything but '{' and '}' (the Redis store's hash tags refuse them).
owners = near_misses(3) | hostile_text(min_size=1, max_size=12, exclude="{}")
#: Buckets as the plugin makes them: a scope, or ``tool.<tool name>``, optionally under the ``memory.`` namespace.
buckets = st.builds(
    lambda namespace, base: namespace + base,
    st.sampled_from(["", "memory."]),
    st.sampled_from(["user", "session", "global", "tool"])
    | st.from_regex(r"tool\.[A-Za-z0-9_.\-]{1,12}", fullmatch=True),
)
#: Keys as ``Remember`` accepts them: printable, 1 to 256 characters (long ones too).
keys = (
    near_misses(3)
    | hostile_text(min_size=1, max_size=24).filter(str.isprintable)
    | hostile_text(min_size=1, max_size=4).filter(str.isprintable).map(lambda k: (k * MAX_KEY_LENGTH)[:MAX_KEY_LENGTH])
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


#: Offsets of deadlines from "now": a millisecond to a century, ties and fractions of a second included.
offsets = st.floats(min_value=0.001, max_value=MAX_TTL) | st.sampled_from([0.001, 0.5, 1.0, 59.999, 60.0, 86400.0])

#: Ways of writing one id that a careless encoding could confuse with the original.
LOOKALIKES: list[tuple[str, Callable[[str], str]]] = [
    ("JSON-escaped", lambda s: json.dumps(s)[1:-1]),
    ("JSON-quoted", json.dumps),
    ("with JSON framing", lambda s: s + '"]'),
    ("as the identity JSON", lambda s: json.dumps(["u", s])),
    ("as a session identity", lambda s: json.dumps(["s", s])),
    ("URL-escaped", lambda s: urllib.parse.quote(s, safe="")),
    ("backslashes doubled", lambda s: s.replace("\\", "\\\\")),
    ("decomposed", lambda s: unicodedata.normalize("NFD", s)),
    ("composed", lambda s: unicodedata.normalize("NFC", s)),
    ("unicode-escaped", lambda s: s.encode("unicode_escape").decode()),
    ("upper-cased", str.upper),
    ("with a trailing ':'", lambda s: s + ":"),
    ("with a leading ':'", lambda s: ":" + s),
    ("with a NUL", lambda s: s + "\x00"),
    ("with a lone surrogate", lambda s: s + "\ud800"),  # a JWT sub may carry one ("\\ud800" in its JSON)
]

#: The three ways a caller has an identity: signed in without a session (2026-07-28), signed in with a
#: session (2025-11-25), anonymous with a session (2025-11-25).
SHAPES = ("user", "user+session", "session")


def caller_of(shape: str, ident: str) -> Caller:
    user_id = None if shape == "session" else ident
    session_id = None if shape == "user" else (ident if shape == "session" else f"{ident}#session")
    return Caller(
        user_id=user_id,
        kind="anonymous" if user_id is None else "user",
        label=None,
        claims={},
        session_id=session_id,
        protocol_version="2026-07-28" if session_id is None else "2025-11-25",
        anonymous_id="anon:properties",
    )


@st.composite
def crowds(draw: st.DrawFn) -> list[Caller]:
    """One id written every way in LOOKALIKES, each a caller of some kind, plus the id itself as a signed-in
    caller and as an anonymous session: different callers that a careless encoding would make one."""
    ident = draw(near_misses(4) | hostile_text(min_size=0, max_size=10))
    crowd = [caller_of("user", ident), caller_of("session", ident)]
    crowd += [caller_of(draw(st.sampled_from(SHAPES)), lookalike(ident)) for _, lookalike in LOOKALIKES]
    # Callers with one user id, or one session, are one person (sharing is right there): keep the first.
    distinct: list[Caller] = []
    for caller in crowd:
        if not any(one_person(caller, other) for other in distinct):
            distinct.append(caller)
    return distinct


def one_person(first: Caller, second: Caller) -> bool:
    same_user = first.user_id is not None and first.user_id == second.user_id
    return same_user or (first.session_id is not None and first.session_id == second.session_id)


# -- fixtures --------------------------------------------------------------------------------------------------------


@pytest.fixture
def loop() -> Iterator[asyncio.Runner]:
    """One event loop for the whole test: the store is opened on it and every example runs on it."""
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path, loop: asyncio.Runner) -> Iterator[Store]:
    """The store under test, open; Redis under this test's own prefix (deleted afterwards)."""
    opened: Store
    if request.param == "memory":
        opened = MemoryStore()
    elif request.param == "sqlite":
        opened = SQLiteStore(tmp_path / "properties.db")
    else:
        opened = RedisStore(request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    loop.run(opened.open())
    yield opened
    loop.run(opened.close())


@pytest.fixture
def base_time() -> float:
    """'Now' for the stores: a day ahead of the real clock, so every deadline given to Redis is in its future."""
    return math.floor(time.time()) + 86400.5


def store_name(store: Store) -> str:
    return type(store).__name__


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
            listed = await store.keys(owner, bucket, now)
            expected_keys = sorted(k for o, b, k in model if (o, b) == (owner, bucket))
            seen["checks"] += 1
            if listed != expected_keys:
                seen["leaks" if set(listed) - set(expected_keys) else "lost"] += 1
            for key in every_key:
                got = await store.get(owner, bucket, key, now)
                expected = model.get((owner, bucket, key))
                want = None if expected is None else Entry(*expected)
                seen["checks"] += 1
                if got != want:
                    ours = got is None or got.data.startswith(repr((owner, bucket, key)).encode() + b"\n")
                    seen["lost" if ours else "leaks"] += 1
                if await store.exists(owner, bucket, key, now) != (want is not None):
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
    seen["wrong expiry"] += left != {(k, Entry(k.encode(), d)) for k, d in model.items() if k not in expired}
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
        if await store.keys(owner, bucket, moment) != sorted(live):
            seen["lost"] += 1
        for key, deadline in model.items():
            got = await store.get(owner, bucket, key, moment)
            present = await store.exists(owner, bucket, key, moment)
            want = Entry(key.encode(), deadline) if key in live else None
            seen["checks"] += 1
            if got != want or present != (want is not None):
                seen["wrong expiry"] += 1
    last = moments[-1]
    for key in model:  # all past their deadline now: gone for delete and compare-and-set too
        if await store.delete(owner, bucket, key, last) or not await store.swap(
            owner, bucket, key, None, b"fresh", None, last
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


# -- Remember --------------------------------------------------------------------------------------------------------


def policy_for(store: Store, clock: ManualClock) -> RememberPolicy:
    """What the plugin builds at startup, on the store under test."""
    return RememberPolicy(Vault(store, Keyring([SECRET])), lambda: clock, None, 65536)


def places_of(caller: Caller, tools: tuple[str, str]) -> list[tuple[Scope, str]]:
    """(scope, tool) pairs this caller may use, global aside."""
    found: list[tuple[Scope, str]] = [("user", tools[0])] if caller.user_id is not None else []
    return [*found, ("session", tools[0]), ("tool", tools[0]), ("tool", tools[1])]


def value_of(index: int, scope: str, tool: str, key: str) -> str:
    """What caller ``index`` keeps under ``key``: it names the caller, so a leak names its source."""
    return f"{index}|{scope}|{tool}|{key}"


async def crowd_reads_its_own(
    policy: RememberPolicy, crowd: list[Caller], chosen_keys: list[str], tools: tuple[str, str]
) -> Counter[str]:
    """Everyone writes the same keys in every place; each reads back only its own, around forgets."""
    seen: Counter[str] = Counter()
    forgotten: set[tuple[int, str, str, str]] = set()
    for index, caller in enumerate(crowd):
        for scope, tool in places_of(caller, tools):
            remember = Remember(policy, caller, tool)
            for key in chosen_keys:
                await remember.set(key, value_of(index, scope, tool, key), scope=scope)
            await remember.set(f"only {index}", index, scope=scope)

    async def check() -> None:
        for index, caller in enumerate(crowd):
            for scope, tool in places_of(caller, tools):
                remember = Remember(policy, caller, tool)
                own = [key for key in chosen_keys if (index, scope, tool, key) not in forgotten]
                for key in chosen_keys:
                    got = await remember.get(key, scope=scope)
                    want = value_of(index, scope, tool, key) if key in own else None
                    seen["checks"] += 1
                    if got != want:
                        seen["lost" if got is None or got.startswith(f"{index}|") else "leaks"] += 1
                listed = await remember.list(scope=scope)
                seen["checks"] += 1
                if listed != sorted([*own, f"only {index}"]):
                    strangers = {k for k in listed if k.startswith("only ") and k != f"only {index}"}
                    seen["leaks" if strangers else "lost"] += 1

    await check()
    # The first caller forgets one key and clears one scope: nobody else loses anything.
    scope, tool = places_of(crowd[0], tools)[0]
    seen["lost"] += not await Remember(policy, crowd[0], tool).forget(chosen_keys[0], scope=scope)
    forgotten.add((0, scope, tool, chosen_keys[0]))
    scope, tool = places_of(crowd[0], tools)[-1]
    await Remember(policy, crowd[0], tool).forget_all(scope=scope)
    forgotten |= {(0, scope, tool, key) for key in chosen_keys}
    await Remember(policy, crowd[0], tool).set("only 0", 0, scope=scope)  # check() expects it in every place
    await check()
    for caller in crowd:  # clean up, so the next example starts empty (and check that it does)
        for scope, tool in places_of(caller, tools):
            remember = Remember(policy, caller, tool)
            await remember.forget_all(scope=scope)
            seen["lost"] += bool(await remember.list(scope=scope))
    return seen


tool_names = st.sampled_from([("mem", "mem_twin"), ("a", "a.b"), ("tool", "tool.tool"), ("x-y", "x_y")])


def test_callers_whose_ids_differ_only_in_escaping_each_read_only_their_own(
    store: Store, loop: asyncio.Runner, figures: Figures
) -> None:
    policy = policy_for(store, ManualClock())
    totals: Counter[str] = Counter()

    @BOUNDED
    @given(crowd=crowds(), chosen_keys=st.lists(keys, min_size=1, max_size=3, unique=True), tools=tool_names)
    def property_holds(crowd: list[Caller], chosen_keys: list[str], tools: tuple[str, str]) -> None:
        assume(not any(key.startswith("only ") for key in chosen_keys))
        seen = loop.run(crowd_reads_its_own(policy, crowd, chosen_keys, tools))
        totals.update(seen, inputs=1, callers=len(crowd))
        assert (seen["leaks"], seen["lost"]) == (0, 0), (seen, crowd, chosen_keys)

    property_holds()
    figures.record(
        inputs=totals["inputs"],
        leaks=totals["leaks"],
        lost=totals["lost"],
        detail=f"{store_name(store)}, through Remember: {totals['inputs']} crowds ({totals['callers']} callers in "
        "all) of one id written every way a careless encoding confuses (JSON-escaped and -quoted, with the "
        "framing '\"]', as identity JSON, URL-escaped, backslashes doubled, NFC/NFD, unicode-escaped, "
        "upper-cased, ':' added, NUL, lone surrogate), each signed in with or without a session or anonymous "
        "with one, plus the id itself as a user and as a session; all writing the same keys in user, session "
        f"and two tools' scope. {totals['checks']} reads, around one caller's forget and forget_all.",
    )
    assert totals["inputs"] >= EXAMPLES // 2


async def remembered_until_the_deadline(
    policy: RememberPolicy, clock: ManualClock, caller: Caller, scope: Scope, ttl: float, start: float
) -> Counter[str]:
    seen: Counter[str] = Counter()
    remember = Remember(policy, caller, "mem")
    clock.set(start)
    await remember.set("draft", "Dear customer", scope=scope, ttl=ttl)
    await remember.increment("sent", scope=scope, ttl=ttl)
    deadline = start + float(ttl)

    clock.set(math.nextafter(deadline, -math.inf))  # the last moment before the deadline
    before = (
        await remember.get("draft", scope=scope),
        await remember.knows("draft", scope=scope),
        await remember.list(scope=scope),
        await remember.increment("sent", scope=scope),  # keeps the deadline
    )
    clock.set(deadline)
    at = (
        await remember.get("draft", scope=scope, default="(gone)"),
        await remember.knows("draft", scope=scope),
        await remember.list(scope=scope),
        await remember.forget("draft", scope=scope),
        await remember.increment("sent", scope=scope),  # starts over
    )
    seen["checks"] += 9
    seen["wrong expiry"] += before != ("Dear customer", True, ["draft", "sent"], 2)
    seen["wrong expiry"] += at != ("(gone)", False, [], False, 1)
    await remember.forget_all(scope=scope)
    return seen


def test_a_remembered_value_lasts_until_the_float_before_its_deadline(
    store: Store, loop: asyncio.Runner, base_time: float, figures: Figures
) -> None:
    clock = ManualClock(base_time)
    policy = policy_for(store, clock)
    totals: Counter[str] = Counter()

    @BOUNDED
    @given(
        scope=st.sampled_from(SCOPES),
        ttl=offsets | st.integers(min_value=1, max_value=MAX_TTL),
        ident=hostile_text(min_size=1, max_size=8),
        later=st.floats(min_value=0, max_value=10_000),
    )
    def property_holds(scope: Scope, ttl: float, ident: str, later: float) -> None:
        caller = caller_of("user", ident)
        seen = loop.run(remembered_until_the_deadline(policy, clock, caller, scope, ttl, base_time + later))
        totals.update(seen, inputs=1)
        assert seen["wrong expiry"] == 0, (scope, ttl, ident, later)

    property_holds()
    figures.record(
        inputs=totals["inputs"],
        leaks=0,
        lost=totals["wrong expiry"],
        detail=f"{store_name(store)}, through Remember with a ManualClock: {totals['inputs']} values and counters "
        "with ttls from 1 ms to 100 years, in every scope; at the float before the deadline get/knows/list see "
        "them and increment keeps the deadline; at the deadline they are gone and increment starts over.",
    )
    assert totals["inputs"] >= EXAMPLES // 2
