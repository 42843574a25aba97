"""Rotating REMEMBER_SECRET across two running instances, as a rolling restart does it, loses nothing.

Two real ``mcpkit run`` processes share one store (the test Redis under a prefix of its own, or one SQLite
file). They are restarted one at a time through the documented steps (``old`` -> ``old,new`` -> ``new,old``
-> ``mcpkit remember rotate`` -> ``new``), first in one order and then in the other, so at every moment the
two run neighbouring steps. Between restarts, values are written through one instance and read through the
other, a counter is bumped through both, and values forgotten through one are looked for through the other;
``rotate`` runs while the two instances forget and rewrite values it is moving. A book of the last
acknowledged value of each key is the truth every read is checked against.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import Client

from mcpkit.testing._holder import Holder
from redis_fixtures import delete_prefix
from reliability.figures import Figures
from reliability.fleet_client import ERAS, FLEET, Tally, call, connected, log_tracebacks
from reliability.processes import ServerProcess

OLD = "rollout-old-secret-0123456789abcdef"
NEW = "rollout-new-secret-fedcba9876543210"
#: What each instance runs with, step by step (docs/stores.md, "Rotating the secret"); rotate runs in step 3.
STEPS: list[tuple[str, ...]] = [(OLD, NEW), (NEW, OLD), (NEW,)]
BULK = 120  # values for rotate to move while the instances change some of them


@dataclass
class Store:
    """Where the two instances keep their values, and how `mcpkit remember` finds it."""

    url: str
    prefix: str | None

    def env(self, secrets: tuple[str, ...]) -> dict[str, str]:
        env = {"REMEMBER_STORE": self.url, "REMEMBER_SECRET": ",".join(secrets)}
        if self.prefix is not None:
            env["FLEET_REDIS_PREFIX"] = self.prefix
        return env

    def command_line(self) -> list[str]:
        return ["--store", self.url, *(["--redis-prefix", self.prefix] if self.prefix else [])]


@dataclass
class Book:
    """The last acknowledged value of each of Nour's keys (None: forgotten), and what the reads found."""

    values: dict[str, str | None] = field(default_factory=dict)
    counter: int = 0
    tally: Tally = field(default_factory=Tally)
    stale: list[str] = field(default_factory=list)
    resurrected: list[str] = field(default_factory=list)

    def check(self, where: str, found: dict[str, str | None]) -> None:
        for key, value in found.items():
            expected = self.values[key]
            if value != expected:
                (self.resurrected if expected is None else self.stale).append(f"{where}: {key}={value!r}")


class Pair:
    """Two fleet instances on one store; each restarts with the secrets it is given.

    Nour keeps one connection per instance and era open (closed before its instance restarts), as a
    client would, so the test spends its time on calls rather than on handshakes.
    """

    def __init__(self, store: Store, cwd: Path) -> None:
        self.store = store
        self.cwd = cwd
        self.instances: list[ServerProcess] = []
        self.restarts = 0
        self.logs: list[ServerProcess] = []
        self._connections: dict[str, tuple[Holder[Client], Client]] = {}

    def start(self, secrets: tuple[str, ...]) -> None:
        with ThreadPoolExecutor(2) as pool:  # side by side: a start takes seconds (imports)
            self.instances = list(pool.map(self._started, [secrets, secrets]))

    async def restart(self, index: int, secrets: tuple[str, ...]) -> None:
        url = self.instances[index].url
        for era in ERAS:
            opened = self._connections.pop(f"{url} {era}", None)
            if opened is not None:
                await opened[0].close()
        assert self.instances[index].stop() in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled
        self.instances[index] = self._started(secrets)
        self.restarts += 1

    async def client(self, url: str, era: str) -> Client:
        opened = self._connections.get(f"{url} {era}")
        if opened is None:
            holder: Holder[Client] = Holder(lambda: connected(url, "nour", era))  # each in a task of its own
            opened = self._connections[f"{url} {era}"] = (holder, await holder.open())
        return opened[1]

    async def close(self) -> None:
        for holder, _ in self._connections.values():
            await holder.close()
        self._connections.clear()

    def _started(self, secrets: tuple[str, ...]) -> ServerProcess:
        process = ServerProcess(FLEET, cwd=self.cwd, env=self.store.env(secrets)).start()
        self.logs.append(process)
        return process

    async def kill(self) -> None:
        await self.close()
        for process in self.instances:
            process.kill()

    @property
    def urls(self) -> tuple[str, str]:
        return self.instances[0].url, self.instances[1].url


async def tool(
    pair: Pair, book: Book, url: str, name: str, arguments: dict[str, object], era: str = ERAS[0]
) -> dict[str, object]:
    return book.tally.take(await call(await pair.client(url, era), name, arguments))


async def read(pair: Pair, book: Book, url: str, keys: list[str], where: str) -> None:
    found = await tool(pair, book, url, "read", {"keys": keys})
    book.check(where, found["values"])  # type: ignore[arg-type]


async def exercise(pair: Pair, book: Book, label: str) -> None:
    """Writes through one instance read through the other, a shared counter, and a forget seen from both."""
    first, second = pair.urls
    for turn in range(4):
        writer, reader = (first, second) if turn % 2 == 0 else (second, first)
        key, value = f"signature-{turn % 2}", f"{label} #{turn}"
        await tool(pair, book, writer, "put", {"key": key, "value": value}, ERAS[turn % 2])
        book.values[key] = value
        await read(pair, book, reader, [key], f"{label}, turn {turn}")
    for turn in range(6):
        counted = await tool(pair, book, pair.urls[turn % 2], "count", {"key": "visits"}, ERAS[turn % 2])
        book.counter += 1
        book.values["visits"] = None  # counters are checked by number, below
        if counted["count"] != book.counter:
            book.stale.append(f"{label}: visits={counted['count']} after {book.counter} increments")
    gone = f"gone-{label}"
    await tool(pair, book, first, "put", {"key": gone, "value": "short-lived"})
    await tool(pair, book, second, "drop", {"key": gone})
    book.values[gone] = None
    await read(pair, book, first, [gone], f"{label}, forgotten through the other")


async def rotate_under_load(pair: Pair, book: Book) -> str:
    """`mcpkit remember rotate` while both instances forget and rewrite values it is moving."""
    command = [sys.executable, "-m", "mcpkit", "remember", "rotate", *pair.store.command_line()]
    env = {**os.environ, "REMEMBER_SECRET": f"{NEW},{OLD}"}
    rotating = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    first, second = pair.urls
    for number in range(0, BULK, 3):
        await tool(pair, book, first, "drop", {"key": f"bulk-{number}"})
        book.values[f"bulk-{number}"] = None
        await tool(pair, book, second, "put", {"key": f"bulk-{number + 1}", "value": f"rewritten {number + 1}"})
        book.values[f"bulk-{number + 1}"] = f"rewritten {number + 1}"
    out, err = await rotating.communicate()
    assert rotating.returncode == 0, err.decode()
    return out.decode()


async def rollout(pair: Pair, book: Book, order: tuple[int, int]) -> str:
    pair.start((OLD,))
    first, _ = pair.urls
    for number in range(BULK):
        await tool(pair, book, first, "put", {"key": f"bulk-{number}", "value": f"kept {number}"})
        book.values[f"bulk-{number}"] = f"kept {number}"
    await exercise(pair, book, "all on old")
    report = ""
    for step, secrets in enumerate(STEPS, start=1):
        if secrets == (NEW,):
            report = await rotate_under_load(pair, book)
            await exercise(pair, book, "rotated")
        for index in order:
            await pair.restart(index, secrets)
            await exercise(pair, book, f"step {step}, instance {index} on {'+'.join(s[8:11] for s in secrets)}")
    everything = [key for key, value in book.values.items() if key != "visits"]
    for url in pair.urls:
        await read(pair, book, url, everything, "at the end")
    return report


def store_at(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if kind == "sqlite":
        yield Store(f"sqlite:///{tmp_path / 'rollout.db'}", None)
        return
    url: str = request.getfixturevalue("redis_url")
    prefix = f"mcpkit-test:{uuid.uuid4().hex}:"
    try:
        yield Store(url, prefix)
    finally:
        delete_prefix(url, prefix)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    yield from store_at(request.param, request, tmp_path)


@pytest.mark.parametrize(
    ("store", "order"),
    [("redis", (0, 1)), ("redis", (1, 0)), ("sqlite", (0, 1))],
    ids=["redis-docs-order", "redis-reverse-order", "sqlite-docs-order"],
    indirect=["store"],
)
async def test_a_rolling_rotation_of_the_secret_loses_nothing_and_never_answers_an_older_value(
    store: Store, order: tuple[int, int], tmp_path: Path, figures: Figures
) -> None:
    pair, book = Pair(store, tmp_path), Book()
    try:
        report = await rollout(pair, book, order)
    finally:
        await pair.kill()
    tracebacks = log_tracebacks(*pair.logs)
    figures.record(
        callers=2,
        calls=book.tally.calls,
        faults=pair.restarts,
        lost=len(book.stale) + len(book.resurrected),
        internal_errors=book.tally.internal_errors + tracebacks,
        detail=(
            f"{store.url.split(':')[0]}: two mcpkit run processes restarted one at a time through old -> old,new -> "
            f"new,old -> rotate -> new (instance {order[0]} first); {BULK} values moved by `rotate` while the "
            f"instances forgot {BULK // 3} and rewrote {BULK // 3} of them. Older answers: {len(book.stale)}; "
            f"forgotten values that came back: {len(book.resurrected)}. rotate: {report.strip()}"
        ),
    )
    assert book.stale == []
    assert book.resurrected == []
    assert tracebacks == 0
    assert "unreadable 0" in report


async def test_skipping_step_1_lets_an_instance_that_knows_only_the_old_secret_answer_an_older_value(
    redis_url: str, tmp_path: Path, figures: Figures
) -> None:
    """Why docs/stores.md has step 1: the hazard it prevents, shown (and so pinned) here."""
    prefix = f"mcpkit-test:{uuid.uuid4().hex}:"
    store, book = Store(redis_url, prefix), Book()
    pair = Pair(store, tmp_path)
    try:
        pair.start((OLD,))
        first, second = pair.urls
        await tool(pair, book, first, "put", {"key": "signature", "value": "v1"})
        await pair.restart(0, (NEW, OLD))  # straight to step 2
        first, second = pair.urls
        await tool(pair, book, first, "put", {"key": "signature", "value": "v2"})
        found = await tool(pair, book, second, "read", {"keys": ["signature"]})
    finally:
        await pair.kill()
        delete_prefix(redis_url, prefix)
    figures.record(
        callers=2,
        calls=book.tally.calls,
        faults=pair.restarts,
        detail="the unsafe order: one instance on new,old, the other still on old alone, which does not see "
        f"values written under new: it answered {found['values']['signature']!r} after 'v2' was acknowledged",
    )
    assert found["values"] == {"signature": None}  # v2 is under the new secret, which this instance lacks
