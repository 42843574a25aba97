"""Counting what reaches Redis from this process: requests, and the round trips a caller waits for."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
from redis.asyncio.connection import AbstractConnection


class RoundTrips:
    """Counts the writes of packed commands to Redis (a pipeline is one write), leaving out a pooled connection's
    health-check PING; ``waits`` counts only those sent while no other awaited its answer, since requests in flight
    together cost one round trip."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[bytes] = []
        self.waits = 0
        awaiting: set[AbstractConnection] = set()
        send, read = AbstractConnection.send_packed_command, AbstractConnection.read_response

        async def sending(connection: AbstractConnection, command: Any, *args: Any, **kwargs: Any) -> None:
            packed = command if isinstance(command, bytes) else b"".join(command)
            if b"\r\nPING\r\n" not in packed[:32]:
                self.sent.append(packed)
                self.waits += not awaiting
                awaiting.add(connection)
            await send(connection, command, *args, **kwargs)

        async def reading(connection: AbstractConnection, *args: Any, **kwargs: Any) -> Any:
            try:
                return await read(connection, *args, **kwargs)
            finally:
                awaiting.discard(connection)

        monkeypatch.setattr(AbstractConnection, "send_packed_command", sending)
        monkeypatch.setattr(AbstractConnection, "read_response", reading)

    @property
    def count(self) -> int:
        return len(self.sent)

    async def of(self, call: Awaitable[Any]) -> int:
        """How many requests ``call`` sent."""
        before = self.count
        await call
        return self.count - before

    async def waited(self, call: Awaitable[Any]) -> tuple[int, int]:
        """(requests, round trips waited for) of ``call``."""
        requests, waits = self.count, self.waits
        await call
        return self.count - requests, self.waits - waits
