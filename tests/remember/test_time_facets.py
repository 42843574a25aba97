"""A window or a source filter is applied by the index before values are opened (docs/search.md "Searching by time"):
what it returns is exactly what filtering the whole ranking returns, it opens only the values its days hold, and
values written before the index kept their day are still found (and get it on ``reindex``).

Through the real HTTP app, on every store (PostgreSQL too).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

import mcpkit_storage.index._index as index_module
from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage.vault import Vault
from remember.support import SECRET, SECRET_B, STORES, build_server
from remember.test_event_time import When, call
from remember.test_rotation import mcpkit

_DAY = 86_400.0
_START = datetime(2022, 1, 1, tzinfo=UTC).timestamp()
_WORDS = ("garden", "coffee", "rain", "train", "book", "river")
_SOURCES = ("user", "tool", "model")


@pytest.fixture(params=[*STORES, "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True), [When])


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many values each of the server's reads of a search's hits opened."""
    counts: list[int] = []
    open_at = Vault.open_at

    async def counting(self: Vault, place: Any, addresses: Any, now: float) -> Any:
        counts.append(len(addresses))
        return await open_at(self, place, addresses, now)

    monkeypatch.setattr(Vault, "open_at", counting)
    return counts


def _window(rng: random.Random) -> dict[str, Any]:
    """A random window over the 60 days written: some narrow, some wide, some open at one end, some to the
    second."""
    start = _START + rng.uniform(-5, 62) * _DAY
    if rng.random() < 0.3:
        start = round(start / _DAY) * _DAY  # on a day's edge
    span = rng.choice([3600.0, _DAY, 2 * _DAY, 4 * _DAY, 10 * _DAY, 40 * _DAY])
    window: dict[str, Any] = {}
    if rng.random() < 0.85:
        window["since"] = start
    if rng.random() < 0.85 or not window:
        window["until"] = start + span
    return window


async def test_a_window_returns_what_filtering_the_whole_ranking_returns(call_as: CallAs) -> None:
    rng = random.Random(41)
    nour = call_as("nour")
    times: dict[str, float] = {}
    sources: dict[str, str] = {}
    for number in range(80):
        key = f"note:{number:02}"
        times[key] = _START + rng.uniform(0, 60) * _DAY
        sources[key] = rng.choice(_SOURCES)
        # Each value's own length (a filler word repeated, 6 more each time than the value before, so a value's
        # 1 to 5 words never make two lengths meet): no two tie, whose order at the store's cut (by store name)
        # and in the matches (newest first) differ.
        text = " ".join(rng.choices(_WORDS, k=rng.randint(1, 5)) + ["filler"] * (6 * number))
        await call(nour, "set", key=key, value=text, at=times[key], source=sources[key])
    for _ in range(40):
        query = " ".join(rng.sample(_WORDS, rng.randint(1, 2)))
        limit = rng.randint(1, 6)
        window = _window(rng)
        kept_sources = rng.choice([None, ["user"], ["tool", "model"]])
        ranked = await call(nour, "search", query=query, limit=100)
        since, until = window.get("since", float("-inf")), window.get("until", float("inf"))
        expected = [
            key
            for key in ranked
            if since <= times[key] < until and (kept_sources is None or sources[key] in kept_sources)
        ]
        found = await call(nour, "search", query=query, limit=limit, sources=kept_sources, **window)
        assert found == expected[:limit], (query, window, kept_sources)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_a_narrow_window_opens_only_the_values_its_days_hold(call_as: CallAs, opened: list[int]) -> None:
    nour = call_as("nour")
    for number in range(40):
        await call(nour, "set", key=f"loud:{number:02}", value="garden garden garden", at=_START + number * _DAY)
    await call(nour, "set", key="quiet", value="a garden among many other words", at=_START + 100.5 * _DAY)
    opened.clear()
    window = {"since": _START + 100 * _DAY, "until": _START + 101 * _DAY}
    assert await call(nour, "search", query="garden", limit=1, **window) == ["quiet"]
    assert sum(opened) == 1  # the ranking holds only the values of that day: the one value opened
    opened.clear()
    assert await call(nour, "search", query="garden", limit=5, since=_START + 100.6 * _DAY) == []
    assert sum(opened) == 1  # its day is in the window, its time is not: opened, then left out
    opened.clear()
    assert await call(nour, "search", query="gardn", limit=1, **window) == ["quiet"]
    assert sum(opened) == 1  # a misspelt word's near spelling is ranked among the window's values too


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "postgres"])
async def test_a_window_keeping_every_value_of_a_tie_keeps_its_newest_as_no_window_does(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    for number in range(30):  # equal texts, each written a minute after the one before
        await call(nour, "set", key=f"move{number:03}", value="office Lyon", at=_START + number * 60.0)
        clock.advance(60)
    newest = await call(nour, "search", query="office Lyon", limit=3)
    assert newest == ["move029", "move028", "move027"]
    assert await call(nour, "search", query="office Lyon", limit=3, since=_START - _DAY) == newest


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_values_written_before_the_index_kept_their_day_are_found_and_reindex_gives_it(
    call_as: CallAs,
    store_options: dict[str, Any],
    mcp_protocol: str,
    opened: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nour = call_as("nour")
    with monkeypatch.context() as before:  # postings as they were made before: words only
        before.setattr(index_module, "facet_words", lambda at, source: [])
        for number in range(20):
            await call(nour, "set", key=f"old:{number:02}", value="garden rain", at=_START + number * _DAY)
    await call(nour, "set", key="new", value="garden rain", at=_START + 50 * _DAY)
    window = {"since": _START + 5 * _DAY, "until": _START + 6 * _DAY}
    assert await call(nour, "search", query="garden", **window) == ["old:05"]
    assert await call(nour, "search", query="garden", since=_START + 50 * _DAY) == ["new"]
    done = mcpkit("reindex", "--store", f"sqlite:///{store_options['path']}", "--force", secret=SECRET)
    assert done.returncode == 0, done.stderr
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True), [When])
    async with running(server, protocol=mcp_protocol) as callers:
        opened.clear()
        assert await call(callers("nour"), "search", query="garden", **window) == ["old:05"]
        assert sum(opened) <= 10 + 1  # the best 10 by words, then that day's (opening every value: 21)


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_the_day_survives_rotation_and_a_rotated_store_is_searched_by_it(
    call_as: CallAs, store_options: dict[str, Any], mcp_protocol: str, opened: list[int]
) -> None:
    nour = call_as("nour")
    for number in range(20):
        await call(nour, "set", key=f"note:{number:02}", value="river book", at=_START + number * _DAY)
    url = f"sqlite:///{store_options['path']}"
    done = mcpkit("rotate", "--store", url, "--force", secret=f"{SECRET_B},{SECRET}")
    assert done.returncode == 0, done.stderr
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET_B, search=True), [When])
    async with running(server, protocol=mcp_protocol) as callers:
        opened.clear()
        window = {"since": _START + 7 * _DAY, "until": _START + 9 * _DAY}
        assert sorted(await call(callers("nour"), "search", query="river", **window)) == ["note:07", "note:08"]
        assert sum(opened) <= 10 + 2  # the best 10 by words, then those days' (opening every value: 20)


def test_a_window_open_or_unknown_at_an_end_takes_words_the_tree_can_give() -> None:
    from mcpkit_storage.index._facets import FACET_LEVELS, window_words

    top = FACET_LEVELS - 1
    # until at infinity (a Kept built by hand) is a window open at its end, as until=None is: no OverflowError
    assert window_words(86_400.0 * 40, float("inf")) == window_words(86_400.0 * 40, None)
    assert window_words(None, float("inf")) == [f"\x00t{top}:{span}" for span in range(16)]
    # a NaN bound is no window the tree can cover: the opened values alone decide
    assert window_words(float("nan"), None) is None
    assert window_words(0.0, float("nan")) is None
