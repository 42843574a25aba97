"""A filtered search by meaning reads the vector shards (docs/search.md "Searching by time"): with ``sources=`` or a
window it returns exactly what filtering the unfiltered ranking returns, each value with the score it has there,
and opens only a shortlist of values, not every value the filter admits.

Through the real HTTP app with ``Concepts`` (the deterministic embedder of ``test_semantic``): memory, SQLite, Redis
and PostgreSQL.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mcpkit import Server, ToolContext, tool
from mcpkit.testing import CallAs
from mcpkit_remember import RememberPlugin
from mcpkit_storage.vault import Vault
from remember.support import SECRET, build_server
from remember.test_semantic import CONCEPTS, Concepts

_DAY = 86_400.0
_START = 1_640_995_200.0  # 2022-01-01, UTC
_SOURCES = ("user", "tool", "model")
_BATCH = 20


@tool(name="look", description="Test tool: keep batches of values with a time and a source, or search them.")
class Look(ToolContext):
    async def execute(
        self,
        op: str,
        values: dict[str, str] | None = None,
        at: float | None = None,
        source: str | None = None,
        query: str = "",
        asked: dict[str, Any] | None = None,
    ) -> list[list[Any]]:
        if op == "keep":
            await self.remember.set_many(values or {}, scope="user", at=at, source=source)  # type: ignore[arg-type]
            return []
        matches = await self.remember.search(query, scope="user", **(asked or {}))
        return [[match.key, match.score] for match in matches]


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    plugin = RememberPlugin.init(**store_options, secret=SECRET, search=True, embedder=Concepts())
    return build_server(plugin, [Look])


async def _look(caller: Any, op: str, **arguments: Any) -> list[tuple[str, float]]:
    return [(key, score) for key, score in (await caller.call("look", {"op": op, **arguments}))["result"]]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many values each read of the server's opened (``open_bucket``: every value of a bucket, counted -1)."""
    counts: list[int] = []
    open_at, open_bucket = Vault.open_at, Vault.open_bucket

    async def counting_at(self: Vault, place: Any, addresses: Any, now: float) -> Any:
        counts.append(len(addresses))
        return await open_at(self, place, addresses, now)

    async def counting_bucket(self: Vault, place: Any, owner: str, bucket: str, now: float) -> Any:
        counts.append(-1)
        return await open_bucket(self, place, owner, bucket, now)

    monkeypatch.setattr(Vault, "open_at", counting_at)
    monkeypatch.setattr(Vault, "open_bucket", counting_bucket)
    return counts


async def test_a_filtered_search_by_meaning_ranks_as_filtering_the_unfiltered_ranking(
    call_as: CallAs, opened: list[int]
) -> None:
    rng = random.Random(41)
    nour = call_as("nour")
    words = [word for group in CONCEPTS.values() for word in group]
    times: dict[str, float] = {}
    sources: dict[str, str] = {}
    for batch in range(60):  # 1,200 values: a batch of 20 shares an event time and a source
        at, source = _START + rng.uniform(0, 60) * _DAY, rng.choice(_SOURCES)
        values = {
            f"note:{batch}:{n}": " ".join([rng.choice(words), *(f"w{rng.randrange(300)}" for _ in range(3))])
            for n in range(_BATCH)
        }
        await _look(nour, "keep", values=values, at=at, source=source)
        times.update(dict.fromkeys(values, at))
        sources.update(dict.fromkeys(values, source))
    compared = 0
    for _ in range(40):
        query = " ".join([rng.choice(words), f"w{rng.randrange(300)}"])
        mode = rng.choice(["hybrid", "hybrid", "semantic"])
        limit = rng.randint(1, 8)
        kept_sources = rng.choice([None, ["user"], ["tool", "model"]])
        window: dict[str, float] = {}
        if kept_sources is None or rng.random() < 0.5:
            start = _START + rng.uniform(-2, 58) * _DAY
            window = {"since": start, "until": start + rng.choice([0.5, 3.0, 20.0]) * _DAY}
        ranked = await _look(nour, "search", query=query, asked={"limit": 100, "mode": mode})
        since, until = window.get("since", float("-inf")), window.get("until", float("inf"))
        expected = [
            (key, score)
            for key, score in ranked
            if since <= times[key] < until and (kept_sources is None or sources[key] in kept_sources)
        ]
        if len(expected) < limit and len(ranked) == 100:
            continue  # the filter's best may lie past the unfiltered ranking's 100: nothing to compare with
        opened.clear()
        asked = {"limit": limit, "mode": mode, "sources": kept_sources, **window}
        found = await _look(nour, "search", query=query, asked=asked)
        # The same keys in the same order, each with the score it has in the unfiltered ranking (the same arithmetic).
        assert found == expected[:limit], (query, mode, kept_sources, window)
        assert -1 not in opened  # no bucket opened whole
        assert sum(opened) < 200, opened  # a shortlist, not the third of 1,200 a filter admits
        compared += 1
    assert compared >= 20
