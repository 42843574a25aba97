"""What the property tests of the stores and of ``Remember`` share: hypothesis settings, hostile text, the stores.

The fixtures (``loop``, ``store``, ``base_time``) are imported by the test modules that use them; their
functions are named ``*_fixture`` so that a test's argument does not shadow the import.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mcpkit_storage.base._values import MAX_KEY_LENGTH, MAX_TTL
from mcpkit_storage.stores._store import Store
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.redis._redis_store import RedisStore
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

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


#: Keys as ``Remember`` accepts them: printable, 1 to 256 characters (long ones too).
keys = (
    near_misses(3)
    | hostile_text(min_size=1, max_size=24).filter(str.isprintable)
    | hostile_text(min_size=1, max_size=4).filter(str.isprintable).map(lambda k: (k * MAX_KEY_LENGTH)[:MAX_KEY_LENGTH])
)


#: Offsets of deadlines from "now": a millisecond to a century, ties and fractions of a second included.
offsets = st.floats(min_value=0.001, max_value=MAX_TTL) | st.sampled_from([0.001, 0.5, 1.0, 59.999, 60.0, 86400.0])


# -- fixtures --------------------------------------------------------------------------------------------------------


@pytest.fixture(name="loop")
def loop_fixture() -> Iterator[asyncio.Runner]:
    """One event loop for the whole test: the store is opened on it and every example runs on it."""
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture(name="store", params=["memory", "sqlite", "redis"])
def store_fixture(request: pytest.FixtureRequest, tmp_path: Path, loop: asyncio.Runner) -> Iterator[Store]:
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


@pytest.fixture(name="base_time")
def base_time_fixture() -> float:
    """'Now' for the stores: a day ahead of the real clock, so every deadline given to Redis is in its future."""
    return math.floor(time.time()) + 86400.5


def store_name(store: Store) -> str:
    return type(store).__name__
