"""Redis at its edges: a clock that disagrees with the server's, a node that is part of a cluster, a full Redis.

Through the real HTTP app with the official ``mcp`` client (``call_as``), against the shared test Redis or a
``redis-server`` of the test's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit import ManualClock, Server, StartupError, StaticKeys, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from redis_fixtures import PrivateRedis
from reliability.figures import Figures

SECRET = "redis-edges-secret-0123456789abcdef"
KEYS = {"nour": "nour-edges-key-0123456789"}
TTLS = (1, 5, 30, 60, 300, 1800)
MISSING = "<missing>"


@tool(name="keep", description="Keep a value for the caller, for ttl seconds.")
class Keep(ToolContext):
    async def execute(self, key: str, value: str, ttl: float | None = None) -> dict[str, bool]:
        await self.remember.set(key, value, scope="user", ttl=ttl)
        return {"kept": True}


@tool(name="recall", description="The caller's value under a key.")
class Recall(ToolContext):
    async def execute(self, key: str) -> dict[str, Any]:
        return {"value": await self.remember.get(key, scope="user", default=MISSING)}


def server(url: str, prefix: str = "mcpkit:remember:") -> Server:
    plugin = RememberPlugin.init(type="redis", url=url, secret=SECRET, redis_prefix=prefix)

    @app(id="edges", tools=[Keep, Recall], plugins=[plugin])
    class EdgesApp: ...

    return Server([EdgesApp], auth=StaticKeys(KEYS))


@pytest.mark.parametrize("skew", [-7200.0, 7200.0], ids=["server-clock-2h-behind-redis", "server-clock-2h-ahead"])
async def test_a_server_clock_hours_off_redis_clock_keeps_every_value_exactly_its_ttl(
    redis_url: str, redis_prefix: str, skew: float, figures: Figures
) -> None:
    clock = ManualClock(time.time() + skew)
    early, late = [], []
    async with running(server(redis_url, redis_prefix), clock=clock) as call_as:
        nour = call_as("nour")
        start = clock.now()
        for ttl in TTLS:
            await nour.call("keep", {"key": f"k{ttl}", "value": f"lives {ttl} s", "ttl": ttl})
        for ttl in TTLS:  # just before its deadline, and just after
            clock.set(start + ttl - 0.5)
            if (await nour.call("recall", {"key": f"k{ttl}"}))["value"] == MISSING:
                early.append(ttl)
            clock.set(start + ttl + 0.5)
            if (await nour.call("recall", {"key": f"k{ttl}"}))["value"] != MISSING:
                late.append(ttl)
    figures.record(
        calls=3 * len(TTLS),
        lost=len(early),
        detail=f"server clock {skew / 3600:+.0f} h from Redis': values of {', '.join(map(str, TTLS))} s read half a "
        f"second before their deadline ({len(early)} missing early) and after it ({len(late)} still there); Redis' "
        "own expiry is relative to the server's clock",
    )
    assert early == []
    assert late == []


async def test_a_redis_cluster_node_named_by_a_redis_url_is_refused_at_start_naming_the_cluster_form(
    make_private_redis: Callable[..., PrivateRedis], tmp_path: Path, figures: Figures
) -> None:
    node = make_private_redis("--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf"))
    with pytest.raises(StartupError) as refused:
        async with running(server(node.url)):
            pass
    message = str(refused.value)
    figures.record(
        faults=1,
        detail="a real redis-server with cluster-enabled yes as a redis:// REMEMBER_STORE: the server does not start, "
        f"and says what to use instead in one line: {message.split(': ', 1)[1][:150]}",
    )
    assert "is a Redis Cluster node; name the cluster's nodes in a redis+cluster:// URL instead" in message


async def test_a_full_redis_answers_store_unavailable_never_an_internal_error(
    make_private_redis: Callable[..., PrivateRedis], figures: Figures
) -> None:
    node = make_private_redis("--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
    codes: dict[str, int] = {}
    async with running(server(node.url)) as call_as:
        nour = call_as("nour")
        await nour.call("keep", {"key": "signature", "value": "Nour"})
        for number in range(600):
            result = await nour.call_tool("keep", {"key": f"note-{number}", "value": "x" * 4000})
            code = (result.meta or {}).get("mcpkit/error", {}).get("code") if result.is_error else "ok"
            codes[code] = codes.get(code, 0) + 1
        still = await nour.call("recall", {"key": "signature"})
    figures.record(
        calls=601,
        internal_errors=codes.get("INTERNAL_ERROR", 0),
        detail=f"a redis-server with maxmemory 2mb and noeviction, written until full: answers by code {codes}; "
        "reads go on",
    )
    assert set(codes) == {"ok", "REMEMBER_STORE_UNAVAILABLE"}
    assert codes["REMEMBER_STORE_UNAVAILABLE"] > 0
    assert still == {"value": "Nour"}
