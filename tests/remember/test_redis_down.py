"""When Redis goes away the call fails cleanly (REMEMBER_STORE_UNAVAILABLE), the server keeps serving and recovers."""

from __future__ import annotations

import pytest

from mcpkit import ManualClock
from mcpkit.testing import ToolCallError, running
from mcpkit_remember import RememberPlugin
from redis_fixtures import PrivateRedis
from remember.support import NEW, OLD, SECRET, build_server, mem


@pytest.mark.parametrize("protocol", [NEW, OLD])
async def test_redis_down_gives_store_unavailable_and_the_server_recovers_by_itself(
    private_redis: PrivateRedis, protocol: str
) -> None:
    server = build_server(RememberPlugin.init(type="redis", url=private_redis.url, secret=SECRET))
    async with running(server, clock=ManualClock(), protocol=protocol) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="signature", value="Nour", scope="user")

        private_redis.stop()
        for op, arguments in [
            ("get", {"key": "signature"}),
            ("set", {"key": "signature", "value": "lost?"}),
            ("increment", {"key": "n"}),
            ("list", {}),
            ("forget", {"key": "signature"}),
            ("knows", {"key": "signature"}),
        ]:
            with pytest.raises(ToolCallError) as refusal:
                await mem(nour, op, scope="user", **arguments)
            assert refusal.value.code == "REMEMBER_STORE_UNAVAILABLE"
            assert "unavailable" in refusal.value.message
            assert "127.0.0.1" not in refusal.value.message  # no internals reach the client
        assert await nour.call("ping") == {"pong": True}  # a tool that does not remember still works

        private_redis.start()  # a new, empty Redis on the same port: the store reconnects by itself
        await mem(nour, "set", key="signature", value="Nour again", scope="user")
        assert await mem(nour, "get", key="signature", scope="user") == "Nour again"
        assert await mem(nour, "increment", key="n", scope="user") == 1
        assert await mem(callers("sam"), "get", key="signature", scope="user") == "<missing>"


async def test_a_frozen_redis_times_out_as_store_unavailable(private_redis: PrivateRedis) -> None:
    server = build_server(RememberPlugin.init(type="redis", url=private_redis.url, secret=SECRET))
    async with running(server, clock=ManualClock()) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="k", value=1, scope="user")
        private_redis.freeze()
        try:
            with pytest.raises(ToolCallError) as refusal:
                await mem(nour, "get", key="k", scope="user")
            assert refusal.value.code == "REMEMBER_STORE_UNAVAILABLE"
            assert await nour.call("ping") == {"pong": True}
        finally:
            private_redis.thaw()
        assert await mem(nour, "get", key="k", scope="user") == 1


async def test_a_server_whose_redis_is_down_at_start_says_redis_is_unreachable(private_redis: PrivateRedis) -> None:
    server = build_server(RememberPlugin.init(type="redis", url=private_redis.url, secret=SECRET))
    private_redis.stop()
    with pytest.raises(Exception, match="unreachable") as failure:
        async with running(server, clock=ManualClock()):
            pass
    assert "not open" not in str(failure.value)
