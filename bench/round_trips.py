"""Round trips per ``self.remember`` operation: request writes on redis-py connections, exchanges on psycopg ones.

``per_operation(remember, counter)`` runs each operation once under a counter: ``SendCounter`` counts writes on
redis-py's asyncio connections (a command or a pipeline each), ``ExchangeCounter`` psycopg's waits for the
server (a statement and its result each; a transaction's BEGIN and COMMIT count too).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Collection, Generator
from typing import Any, Protocol

import redis.asyncio.connection as redis_connection

from mcpkit_remember import Remember

__all__ = ["OPERATIONS", "VALUE", "ExchangeCounter", "SendCounter", "per_operation"]

VALUE = "v" * 100  # a 100-character string: 102 bytes as JSON

#: Every operation measured, in the page's order.
OPERATIONS = (
    "set", "get", "knows", "forget", "get (missing)", "increment", "increment (new key)", "update", "list",
)  # fmt: skip


class Counter(Protocol):
    sends: int

    def __enter__(self) -> Counter: ...

    def __exit__(self, *exc: object) -> None: ...


class SendCounter:
    """Counts request writes on redis-py asyncio connections: one write (command or pipeline) = one round trip."""

    def __init__(self) -> None:
        self.sends = 0
        self._original = redis_connection.AbstractConnection.send_packed_command

    def __enter__(self) -> SendCounter:
        counter, original = self, self._original

        async def counting(conn: Any, command: Any, check_health: bool = True) -> None:
            counter.sends += 1
            await original(conn, command, check_health)

        redis_connection.AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        redis_connection.AbstractConnection.send_packed_command = self._original  # type: ignore[method-assign]


class ExchangeCounter:
    """Counts psycopg's exchanges with the server: the ``AsyncConnection.wait`` calls whose generator does I/O
    (one statement, BEGIN or COMMIT each; a COMMIT with no transaction open sends nothing and is not counted)."""

    def __init__(self) -> None:
        import psycopg

        self.sends = 0
        self._class = psycopg.AsyncConnection
        self._original = psycopg.AsyncConnection.wait

    def __enter__(self) -> ExchangeCounter:
        counter, original = self, self._original

        def observed(gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
            try:
                item = next(gen)
            except StopIteration as done:
                return done.value  # nothing sent
            counter.sends += 1
            while True:
                try:
                    item = gen.send((yield item))
                except StopIteration as done:
                    return done.value

        async def counting(conn: Any, gen: Generator[Any, Any, Any], *args: Any, **kwargs: Any) -> Any:
            return await original(conn, observed(gen), *args, **kwargs)

        self._class.wait = counting  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self._class.wait = self._original  # type: ignore[method-assign]


def _operations(remember: Remember) -> dict[str, Callable[[], Awaitable[object]]]:
    return {
        "set": lambda: remember.set("k", VALUE, scope="user"),
        "get": lambda: remember.get("k", scope="user"),
        "knows": lambda: remember.knows("k", scope="user"),
        "forget": lambda: remember.forget("k", scope="user"),
        "get (missing)": lambda: remember.get("k", scope="user"),
        "increment": lambda: remember.increment("counter", scope="user"),
        "increment (new key)": lambda: remember.increment(f"n{uuid.uuid4().hex}", scope="user"),
        "update": lambda: remember.update("counter", lambda n: n + 1, scope="user"),
        "list": lambda: remember.list(scope="user"),
    }


async def per_operation(
    remember: Remember,
    counter: Callable[[], Counter],
    *,
    names: Collection[str] = OPERATIONS,
    snapshot: Callable[[], dict[str, int]] | None = None,
) -> dict[str, dict[str, Any]]:
    """``{operation: {"round_trips": n}}``, each operation run once after a warm-up; with ``snapshot`` (a
    server's command counts), also ``"commands"``: the counts that changed."""
    await remember.set("warm", 1, scope="user")  # scripts loaded, connection open
    await remember.set("counter", 1, scope="user")
    out: dict[str, dict[str, Any]] = {}
    for name, operation in _operations(remember).items():
        if name not in names:
            continue
        before = snapshot() if snapshot is not None else {}
        with counter() as counting:
            await operation()
        out[name] = {"round_trips": counting.sends}
        if snapshot is not None:
            after = snapshot()
            out[name]["commands"] = {cmd: n - before.get(cmd, 0) for cmd, n in after.items() if n != before.get(cmd, 0)}
    return out
