"""Properties of ``Remember``, on every store, over inputs hypothesis makes up.

Two callers whose ids differ only in escaping (or carry the JSON framing ``"]``) each read only their own
values, and a remembered value lasts until the float before its deadline. Time is moved by hand
(``ManualClock``): nothing sleeps. Properties of the stores alone are in test_store_properties.py.

Each example cleans up after itself with ``forget_all``, and checks that it did, so one store serves every
example of a test and a leftover from one example would show up as a leak in the next.
"""

from __future__ import annotations

import asyncio
import json
import math
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable

from hypothesis import assume, given
from hypothesis import strategies as st

from mcpkit import Caller, ManualClock
from mcpkit_remember import SCOPES, Remember, Scope
from mcpkit_remember._remember import RememberPolicy
from mcpkit_storage.base._values import MAX_TTL
from mcpkit_storage.sealing._keyring import Keyring
from mcpkit_storage.stores._store import Store
from mcpkit_storage.vault._vault import Vault
from reliability.callers import LEGACY, MODERN
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

SECRET = "store-properties-secret-0123456789"

# -- callers ---------------------------------------------------------------------------------------------------------

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
        protocol_version=MODERN if session_id is None else LEGACY,
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
