"""``RedisClusterStore.swap_many``'s writes: one pipeline per primary, and what each write's reply says was made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.crc import key_slot

from .. import StoreUnavailableError
from . import _redis_wire as wire

__all__ = ["Batch", "Replication", "node_pipeline"]

#: One ``SWAP`` call: its arguments (the time and margin first) and the keys it declares (the value's first).
Call = tuple[Sequence[str | bytes], Sequence[str]]
#: A write not answered yet.
_PENDING: Any = object()
#: Stamps a pipeline writes before its ``WAIT``, each in another of its slots: one that lands is enough.
STAMPS = 3


class Replication(NamedTuple):
    """``wait=``: how many replicas must have a node's writes, within how many milliseconds."""

    replicas: int
    timeout_ms: int


async def node_pipeline(redis: Redis, sha: str, calls: Sequence[Call], wait: Replication | None) -> list[Any]:
    """Each of ``calls`` by ``EVALSHA`` in one pipeline on one primary: each reply or refusal, in order. With ``wait``,
    then a short-lived write (a stamp) in each of the last ``STAMPS`` slots of the calls and ``WAIT`` (more replies):
    ``WAIT`` counts the replicas that have the connection's last write, so a resent swap that changed nothing is
    confirmed only once they have all before it; a stamp refused with its slot (moved), another still lands."""
    async with redis.pipeline(transaction=False) as pipe:
        for args, keys in calls:
            pipe.evalsha(sha, len(keys), *keys, *args)
        if wait is not None:
            for stamp in _stamps(calls):
                pipe.set(stamp, b"1", px=1000)
            pipe.wait(wait.replicas, wait.timeout_ms)
        answers: list[Any] = await pipe.execute(raise_on_error=False)
    return answers


def _stamps(calls: Sequence[Call]) -> list[str]:
    """``prefix{group}:w`` for the groups of the last ``STAMPS`` distinct groups of ``calls``, the last first."""
    stamps: dict[str, None] = {}
    for _, keys in reversed(calls):
        stamps[keys[0][: keys[0].index("}") + 1] + ":w"] = None
        if len(stamps) == STAMPS:
            break
    return list(stamps)


class Batch:
    """The writes of one ``swap_many`` and what each answered so far, across the tries while slots move.

    A write answered keeps its answer; one that certainly did not run is sent again at the next try, but only when
    nothing after it in its slot ran (a later write sees the earlier ones). Anything else that failed may have been
    made: the batch then fails as possibly made, never sending it again.
    """

    def __init__(self, calls: Sequence[Call]) -> None:
        self.calls = calls
        self.slots = [key_slot(keys[0].encode()) for _, keys in calls]
        for number, ((_, keys), slot) in enumerate(zip(calls, self.slots, strict=True)):
            if any(key_slot(key.encode()) != slot for key in keys):
                raise ValueError(
                    f"write {number + 1} of a RedisClusterStore.swap_many names owners of several placement groups "
                    "(also=): a script runs in one hash slot, so every address of one write must share its owner's "
                    "group (the part before the '.')"
                )
        self.replies: list[Any] = [_PENDING] * len(calls)
        self._again: Exception | None = None
        self._unsure: str | None = None

    def pending(self) -> list[int]:
        """The writes (their positions) with no answer yet, in order."""
        return [number for number, reply in enumerate(self.replies) if reply is _PENDING]

    def made(self) -> int:
        """How many writes were made (answered as written)."""
        return sum(1 for reply in self.replies if reply is not _PENDING and int(reply) == 1)

    def begin(self) -> None:
        """A new try: nothing has failed in it yet."""
        self._again = self._unsure = None

    def node_failed(self, numbers: Sequence[int], failure: BaseException) -> None:
        """A node's whole pipeline failed: sent again if no connection could be made for it, else possibly made."""
        if not isinstance(failure, (redis_errors.RedisError, OSError)):
            raise failure  # a cancellation or a programming error, not the store's answer
        if wire.never_sent(failure):
            self._again = self._again or failure
        else:
            self._unsure = self._unsure or f"{len(numbers)} pipelined writes got no answer ({failure})"

    def node_answered(self, numbers: Sequence[int], replies: Sequence[Any], wait: Replication | None) -> bool:
        """Take a node's replies to the writes ``numbers`` (and, with ``wait``, to the stamps and ``WAIT``); True when
        the node did not have the script (loaded there, those writes are sent again: they did not run)."""
        answers, positions_of = replies[: len(numbers)], dict[int, list[int]]()
        for position, number in enumerate(numbers):
            positions_of.setdefault(self.slots[number], []).append(position)
        made_here = unloaded = False
        for positions in positions_of.values():
            failed = [p for p in positions if isinstance(answers[p], Exception)]
            first = positions.index(failed[0]) if failed else len(positions)
            for position in positions[:first]:
                self.replies[numbers[position]] = answers[position]
                made_here = True
            rest = [answers[position] for position in positions[first:]]
            if all(isinstance(answer, Exception) and wire.refused_before_running(answer) for answer in rest):
                if rest:
                    unloaded = unloaded or isinstance(rest[0], redis_errors.NoScriptError)
                    self._again = self._again or _retriable(rest[0])
                continue
            made_here = True
            failure = next((a for a in rest if isinstance(a, Exception) and not wire.refused_before_running(a)), None)
            why = failure or "a write that did not run was followed in its slot by one that did"
            self._unsure = self._unsure or f"{len(failed)} of {len(numbers)} pipelined writes failed, others ran: {why}"
        if wait is not None and made_here:
            self._confirm(replies[len(numbers) :], wait)
        return unloaded

    def failure(self, where: str) -> Exception | None:
        """Why this try did not answer every write: ``StoreUnavailableError`` (possibly made) when a write may have
        been made without its answer, else the refusal of a write that did not run (None: all answered)."""
        if self._unsure is not None:
            return StoreUnavailableError(f"Redis Cluster at {where}: {self._unsure}", maybe_applied=True)
        return self._again

    def _confirm(self, replies: Sequence[Any], wait: Replication) -> None:
        *stamped, replicas = replies
        refused = [reply for reply in stamped if isinstance(reply, Exception)]
        unconfirmed = (
            replicas if isinstance(replicas, Exception) else refused[0] if len(refused) == len(stamped) else None
        )
        if unconfirmed is not None:
            why = f"their replication could not be confirmed ({unconfirmed})"
        elif int(replicas) < wait.replicas:
            why = (
                f"only {replicas} of the {wait.replicas} replicas asked for (wait=) had them within "
                f"{wait.timeout_ms} ms"
            )
        else:
            return
        self._unsure = self._unsure or f"pipelined writes reached their primary but {why}"


def _retriable(refusal: Exception) -> Exception:
    """A refusal before running as the store's retries read it: a missing script (now loaded) as a slot moving."""
    if isinstance(refusal, redis_errors.NoScriptError):
        return redis_errors.TryAgainError("the script was loaded on this primary")
    return refusal
