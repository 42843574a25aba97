"""The rollback guard: a value put back after this process saw it replaced is caught; late reads are not."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit_storage.vault._rollback import RollbackGuard

A, B, C = (bytes([n]) * 32 for n in (1, 2, 3))  # three ciphertexts (the guard looks at their last 16 bytes)


def test_a_value_replayed_after_this_process_replaced_it_is_caught() -> None:
    guard = RollbackGuard()
    assert guard.seen("k", A, guard.begin())
    write = guard.begin()
    guard.replaced("k", A, B, write)
    assert guard.seen("k", B, guard.begin())
    assert not guard.seen("k", A, guard.begin())


def test_a_value_replayed_after_this_process_deleted_it_is_caught() -> None:
    guard = RollbackGuard()
    assert guard.seen("k", A, guard.begin())
    guard.deleted("k", guard.begin())
    assert not guard.seen("k", A, guard.begin())


def test_a_read_in_flight_during_the_replacement_may_return_the_old_value() -> None:
    guard = RollbackGuard()
    guard.seen("k", A, guard.begin())
    late = guard.begin()  # began before the write below finished
    guard.replaced("k", A, B, guard.begin())
    assert guard.seen("k", A, late)
    assert guard.seen("k", B, guard.begin())  # the late read changed nothing


def test_a_stale_read_learnt_after_a_newer_one_changes_nothing() -> None:
    guard = RollbackGuard()
    slow = guard.begin()  # this read is served first, and answered last: with the old value C
    assert guard.seen("k", A, guard.begin())
    assert guard.seen("k", C, slow)
    assert guard.seen("k", A, guard.begin())  # A is still current: no false alarm


def test_another_writers_value_seen_later_retires_what_came_before() -> None:
    guard = RollbackGuard()
    guard.seen("k", A, guard.begin())
    guard.seen("k", B, guard.begin())  # another instance wrote B
    assert not guard.seen("k", A, guard.begin())


def test_addresses_are_independent_and_the_guard_stays_bounded() -> None:
    guard = RollbackGuard(addresses=10)
    guard.seen("k", A, guard.begin())
    guard.replaced("k", A, B, guard.begin())
    assert guard.seen("other", A, guard.begin())
    for number in range(100):
        guard.seen(f"k{number}", C, guard.begin())
    assert len(guard._current) <= 10
    assert len(guard._replaced) <= 10


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=2, max_value=6))
def test_interleaved_reads_and_writes_on_a_linearizable_store_never_raise_an_alarm(seed: int, workers: int) -> None:
    """Random interleavings of concurrent reads, writes and deletes against one honest register: no alarm, ever.

    Each operation has three moments, interleaved at random with the others': it begins (takes its tick), it
    takes effect in the store (a read is served, a write or delete applied), and it completes (the guard is
    told). So reads begin before writes and finish after them, writes land after later reads began, and blind
    puts (``old=None``) and deletes without ``old`` happen, as in the vault.
    """
    rng = random.Random(seed)
    guard = RollbackGuard()
    store: bytes | None = rng.randbytes(32)
    running: list[dict[str, object]] = []
    for _ in range(300):
        if running and (len(running) >= workers or rng.random() < 0.6):
            op = running[rng.randrange(len(running))]
            if not op["applied"]:
                kind = op["kind"]
                if kind == "read":
                    op["result"] = store
                elif kind in ("write", "put"):
                    op["old"] = store if kind == "write" else None
                    store = op["new"]  # type: ignore[assignment]
                else:
                    op["old"] = store if rng.random() < 0.5 else None
                    store = None
                op["applied"] = True
                continue
            running.remove(op)
            began = op["began"]
            assert isinstance(began, int)
            if op["kind"] == "read":
                result = op["result"]
                if result is not None:
                    assert isinstance(result, bytes)
                    assert guard.seen("k", result, began)
            elif op["kind"] in ("write", "put"):
                guard.replaced("k", op["old"], op["new"], began)  # type: ignore[arg-type]
            else:
                guard.deleted("k", began, op["old"])  # type: ignore[arg-type]
            continue
        action = rng.random()
        kind = "read" if action < 0.5 else "write" if action < 0.75 else "put" if action < 0.92 else "delete"
        running.append({"kind": kind, "began": guard.begin(), "applied": False, "new": rng.randbytes(32)})
