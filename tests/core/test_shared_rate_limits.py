"""Rate limits shared by every instance through Redis (``Server(rate_limit_store=...)``): a caller gets N calls
per period from all instances together, atomically, on Redis's clock; while Redis is out each instance counts
in process and says so; no caller id is written to Redis."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from mcpkit import ConfigurationError, ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, running
from redis_cluster_fixtures import Cluster
from redis_fixtures import PrivateRedis, delete_prefix

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


@tool(name="ping", description="Answer pong.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return "pong"


@tool(name="send_email", description="Send an email (expensive).", rate_limit="2/minute")
class SendEmail(ToolContext):
    async def execute(self, to: str) -> dict[str, str]:
        return {"sent": to}


@app(id="desk", tools=[Ping, SendEmail])
class DeskApp: ...


@pytest.fixture
def name(redis_url: str) -> Iterator[str]:
    """A server name of this test's own: the instances that share it share buckets; deleted afterwards."""
    name = f"rate-test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_prefix(redis_url, f"mcpkit:ratelimit:{name}:")


def instance(name: str, store: str, **options: Any) -> Server:
    return Server([DeskApp], auth=StaticKeys(KEYS), name=name, rate_limit_store=store, **options)


async def outcome(call: Any) -> str:
    try:
        await call
    except ToolCallError as refused:
        return refused.code
    return "ok"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_instances_share_one_budget_per_caller(redis_url: str, name: str, protocol: str) -> None:
    async with (
        running(instance(name, redis_url, rate_limit="3/minute"), protocol=protocol) as first,
        running(instance(name, redis_url, rate_limit="3/minute"), protocol=protocol) as second,
    ):
        nour_a, nour_b = first("nour"), second("nour")
        assert await nour_a.call("ping", {}) == "pong"
        assert await nour_b.call("ping", {}) == "pong"
        assert await nour_a.call("ping", {}) == "pong"
        with pytest.raises(ToolCallError) as refused:
            await nour_b.call("ping", {})
        assert refused.value.code == "RATE_LIMITED"
        assert "at most 3/minute" in refused.value.message
        assert refused.value.result.meta is not None
        assert 0 < refused.value.result.meta["mcpkit/error"]["retry_after_seconds"] <= 20
        assert await second("sam").call("ping", {}) == "pong"  # another caller, another bucket


async def test_a_burst_across_instances_is_allowed_exactly_the_limit(redis_url: str, name: str) -> None:
    async with (
        running(instance(name, redis_url)) as first,
        running(instance(name, redis_url)) as second,
    ):
        callers = [first("nour"), second("nour")] * 5
        outcomes = await asyncio.gather(
            *(c.call("send_email", {"to": "a@example.com"}) for c in callers), return_exceptions=True
        )
    sent = [result for result in outcomes if result == {"sent": "a@example.com"}]
    refused = [error for error in outcomes if isinstance(error, ToolCallError) and error.code == "RATE_LIMITED"]
    assert (len(sent), len(refused)) == (2, 8)


async def test_buckets_refill_on_redis_time_and_expire(redis_url: str, name: str) -> None:
    async with running(instance(name, redis_url, rate_limit="2/second")) as call_as:
        nour = call_as("nour")
        assert [await outcome(nour.call("ping", {})) for _ in range(3)] == ["ok", "ok", "RATE_LIMITED"]
        await asyncio.sleep(0.6)  # one call back every 0.5 s, by Redis's clock (the framework clock is not used)
        assert await outcome(nour.call("ping", {})) == "ok"
    # The bucket's key, at a rate slow enough that it is still there however long the machine took to get here.
    async with running(instance(f"{name}-slow", redis_url, rate_limit="2/minute")) as call_as:
        assert await outcome(call_as("nour").call("ping", {})) == "ok"
    client = redis.Redis.from_url(redis_url)
    try:
        keys = [key.decode() for key in client.scan_iter(match=f"mcpkit:ratelimit:{name}-slow:*")]
        assert len(keys) == 1
        assert "nour" not in keys[0]  # a hash of the caller, never its id
        assert 0 < client.pttl(keys[0]) <= 60_000  # gone once the bucket would be full again
    finally:
        client.close()


async def test_while_redis_is_out_each_instance_counts_in_process(
    private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    server = instance("outage", private_redis.url, rate_limit="3/minute")
    async with running(server, clock=clock) as call_as:
        nour = call_as("nour")
        assert await outcome(nour.call("ping", {})) == "ok"  # counted in Redis
        private_redis.stop()
        with caplog.at_level(logging.WARNING, logger="mcpkit.rate_limits"):
            results = [await outcome(nour.call("ping", {})) for _ in range(4)]
        assert results == ["ok", "ok", "ok", "RATE_LIMITED"]  # the local buckets start full: never unlimited
        warnings = [record.getMessage() for record in caplog.records if record.name == "mcpkit.rate_limits"]
        assert len(warnings) == 1
        assert "cannot be reached" in warnings[0]
        assert "counting calls in this process" in warnings[0]
        private_redis.start()
        clock.advance(5)  # Redis is tried again after RETRY_SECONDS; the restarted one kept nothing: full again
        assert [await outcome(nour.call("ping", {})) for _ in range(4)] == ["ok", "ok", "ok", "RATE_LIMITED"]
        assert len([record for record in caplog.records if record.name == "mcpkit.rate_limits"]) == 1


async def test_a_redis_cluster_node_is_named_as_such_and_calls_are_counted_in_process(
    redis_cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    callers = {f"caller-{number}": f"caller-{number}-key-0123456789" for number in range(12)}
    node = redis_cluster.primaries()[0]
    server = Server(
        [DeskApp], auth=StaticKeys(callers), name=f"rate-test-{uuid.uuid4().hex[:12]}",
        rate_limit="3/minute", rate_limit_store=node.url,
    )  # fmt: skip
    async with running(server) as call_as:
        with caplog.at_level(logging.WARNING, logger="mcpkit.rate_limits"):
            results = [await outcome(call_as(caller).call("ping", {})) for caller in callers]
    warnings = [record.getMessage() for record in caplog.records if record.name == "mcpkit.rate_limits"]

    assert results == ["ok"] * len(callers)  # never refused for the limiter's own trouble
    assert len(warnings) == 1  # one caller of the twelve at least hashes to another node's slot: MOVED
    assert "is a Redis Cluster node, and rate_limit_store takes one Redis node (not a cluster)" in warnings[0]


@pytest.mark.parametrize("store", ["postgresql://localhost/db", "127.0.0.1:6379", 6379])
def test_a_store_that_is_not_redis_is_refused_when_the_server_is_built(store: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"rate_limit_store=\.\.\.\) is a Redis URL"):
        instance("bad", store, rate_limit="3/minute")
