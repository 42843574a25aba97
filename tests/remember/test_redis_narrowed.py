"""On Redis a source filter goes to the SEARCH script with the query (``NarrowingStore``): a filtered search is the
same two round trips as an unfiltered one, rank and open, and opens only the values the filter keeps
(docs/search.md "Searching by time")."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from redis_round_trips import RoundTrips
from remember.support import SECRET, build_server, mem
from remember.test_provenance import Prov
from remember.test_time_facets import opened  # noqa: F401  the fixture counting the values each read opens


@pytest.mark.parametrize("store_kind", ["redis"])
async def test_a_filtered_redis_search_is_the_two_round_trips_of_an_unfiltered_one(
    store_options: dict[str, Any],
    mcp_protocol: str,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[int],  # noqa: F811
) -> None:
    trips = RoundTrips(monkeypatch)
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True), [Prov])
    async with running(server, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        for number in range(30):  # each its own length: no two tie (a long tie at the cut ranks again)
            source = "user" if number % 10 == 0 else "tool"
            words = "rain Lyon" + " umbrella" * number
            await mem(nour, "set_many", tool="prov", value={f"note:{number:02}": words}, source=source)

        async def search(**filters: Any) -> tuple[int, int]:
            return await trips.waited(mem(nour, "search", tool="prov", query="rain Lyon", **filters))

        assert await search() == (2, 2)  # rank, then open the best
        await search(sources=["user"])  # the first filtered search counts the bucket's facets once
        opened.clear()
        assert await search(sources=["user"]) == (2, 2)
        assert opened == [3]  # the three values of the user's, none of the tool's
        found = await mem(nour, "search", tool="prov", query="rain Lyon", sources=["user"])
        assert sorted(key for key, _ in found) == ["note:00", "note:10", "note:20"]
