"""Conversation history survives its server (issue 13): a real ``mcpkit run`` process on SQLite, Redis and a Redis
Cluster is killed with ``kill -9`` while agents save, then started again — every acknowledged message is there, in
order."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from history_server import KEYS
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from reliability.processes import serving

HERE = Path(__file__).resolve().parent
TARGET = f"{HERE / 'history_server.py'}:server"
SECRET = "history-restart-secret-0123456789"


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {"REMEMBER_STORE": f"sqlite:///{tmp_path / 'history.db'}", "REMEMBER_SECRET": SECRET}
        return
    if request.param == "redis-cluster":
        url, prefix = request.getfixturevalue("redis_cluster").url, request.getfixturevalue("cluster_prefix")
    else:
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    yield {"REMEMBER_STORE": url, "REMEMBER_SECRET": SECRET, "TEST_REDIS_PREFIX": prefix}


async def call(url: str, who: str, tool: str, arguments: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {KEYS[who]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,
    ):
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result
    return result.structured_content


async def test_kill_9_while_agents_save_loses_no_acknowledged_message(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    acknowledged: dict[str, list[str]] = {"nour": [], "sam": []}
    enough = asyncio.Event()  # both agents have 15 acknowledged messages: time to kill the server

    async def agent(url: str, who: str) -> None:
        for turn in range(1000):
            message = {"role": "user", "content": f"{who} turn {turn}"}
            try:
                await call(url, who, "save_messages", {"conversation": "chat", "messages": [message]})
            except Exception:  # the server died mid-call: this one was never acknowledged
                return
            acknowledged[who].append(message["content"])
            if min(len(saved) for saved in acknowledged.values()) >= 15:
                enough.set()

    with serving(TARGET, cwd=tmp_path, env=store_env) as first:
        agents = [asyncio.create_task(agent(first.url, who)) for who in ("nour", "sam")]
        async with asyncio.timeout(60):
            await enough.wait()
        first.kill()  # kill -9: no shutdown code runs
        await asyncio.gather(*agents)

    with serving(TARGET, cwd=tmp_path, env=store_env) as second:
        loaded = {who: await call(second.url, who, "load_history", {"conversation": "chat"}) for who in ("nour", "sam")}

    for who, saved in acknowledged.items():
        kept = [message["content"] for message in loaded[who]["messages"]]
        assert len(saved) >= 15
        # Every acknowledged message is there, in the order it was saved; at most the one in flight is extra.
        assert kept[: len(saved)] == saved
        assert len(kept) <= len(saved) + 1
        assert all(content.startswith(f"{who} turn ") for content in kept)
