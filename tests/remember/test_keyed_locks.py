"""``KeyedLocks``: writers of one key take turns in order, a cancelled waiter never keeps the key, and a key
nobody holds costs nothing."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit_storage import KeyedLocks, TurnTimeoutError


async def _turn(locks: KeyedLocks, key: str, log: list[str], name: str, hold: asyncio.Event | None = None) -> None:
    if not locks.take(key):
        await locks.wait(key)
    try:
        log.append(f"{name} in")
        if hold is not None:
            await hold.wait()
        else:
            await asyncio.sleep(0)
        log.append(f"{name} out")
    finally:
        locks.give(key)


async def test_holders_of_one_key_take_turns_first_come_first_served() -> None:
    locks, log, release = KeyedLocks(30.0), [], asyncio.Event()
    first = asyncio.create_task(_turn(locks, "k", log, "a", release))
    await asyncio.sleep(0)
    others = [asyncio.create_task(_turn(locks, "k", log, name)) for name in "bcd"]
    other_key = asyncio.create_task(_turn(locks, "other", log, "x"))
    await asyncio.sleep(0.01)
    assert log[0] == "a in"
    assert "b in" not in log  # b, c and d wait for a; another key does not
    assert log[-2:] == ["x in", "x out"]
    release.set()
    await asyncio.gather(first, *others, other_key)
    turns = [entry for entry in log if not entry.startswith("x")]
    assert turns == ["a in", "a out", "b in", "b out", "c in", "c out", "d in", "d out"]
    assert len(locks) == 0  # nothing kept once nobody holds or waits


async def test_a_waiter_cancelled_before_its_turn_is_skipped() -> None:
    locks, log, release = KeyedLocks(30.0), [], asyncio.Event()
    holder = asyncio.create_task(_turn(locks, "k", log, "a", release))
    await asyncio.sleep(0)
    doomed = asyncio.create_task(_turn(locks, "k", log, "b"))
    last = asyncio.create_task(_turn(locks, "k", log, "c"))
    await asyncio.sleep(0)
    doomed.cancel()
    release.set()
    await asyncio.gather(holder, last)
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert log == ["a in", "a out", "c in", "c out"]
    assert len(locks) == 0


async def test_a_waiter_cancelled_after_being_handed_the_turn_passes_it_on() -> None:
    locks, log = KeyedLocks(30.0), []
    assert locks.take("k")
    waiter = asyncio.create_task(_turn(locks, "k", log, "b"))
    last = asyncio.create_task(_turn(locks, "k", log, "c"))
    await asyncio.sleep(0)
    locks.give("k")  # b's turn now, but b has not run yet
    waiter.cancel()  # ... and is cancelled before it does
    await asyncio.gather(last)
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert log == ["c in", "c out"]  # c got the turn b could not take, and nobody holds the key
    assert len(locks) == 0


async def test_held_takes_the_turn_for_a_block_even_when_the_block_raises() -> None:
    locks, log = KeyedLocks(30.0), []

    async def failing() -> None:
        async with locks.held("k"):
            log.append("failing in")
            await asyncio.sleep(0)
            raise ValueError("boom")

    async def after() -> None:
        async with locks.held("k"):
            log.append("after in")

    first, second = asyncio.create_task(failing()), asyncio.create_task(after())
    with pytest.raises(ValueError, match="boom"):
        await first
    await second
    assert log == ["failing in", "after in"]
    assert len(locks) == 0


async def test_a_waiter_whose_turn_does_not_come_within_the_timeout_leaves_the_queue() -> None:
    locks, log, release = KeyedLocks(0.05), [], asyncio.Event()
    holder = asyncio.create_task(_turn(locks, "k", log, "a", release))
    await asyncio.sleep(0)
    late = asyncio.create_task(_turn(locks, "k", log, "b"))
    with pytest.raises(TurnTimeoutError, match=r"waited 0.05 seconds for its turn") as raised:
        await late
    after = asyncio.create_task(_turn(locks, "k", log, "c"))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holder, after)
    assert raised.value.timeout == 0.05
    assert log == ["a in", "a out", "c in", "c out"]  # b never held the key, and the queue went on without it
    assert len(locks) == 0
