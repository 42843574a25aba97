"""Scripts sent together: one pipeline (not a transaction) of script calls, each atomic on its own, each answered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from .. import QuotaExceededError, Write
from . import _redis_wire as wire

__all__ = ["pipelined", "swap_answers"]

#: One script call: its arguments and the keys it declares.
Call = tuple[Sequence[str | bytes], Sequence[str]]


async def pipelined(client: Redis, script: AsyncScript, calls: Sequence[Call]) -> list[Any]:
    """Each of ``calls`` to ``script`` in one pipeline: one round trip (and the pipeline's check that the script is
    loaded), whatever their number; each answer as the script gave it."""
    async with client.pipeline(transaction=False) as pipe:
        for args, keys in calls:
            await script(keys=keys, args=args, client=pipe)
        answers: list[Any] = await pipe.execute()
    return answers


def swap_answers(codes: Sequence[Any], writes: Sequence[Write]) -> list[bool | QuotaExceededError]:
    """``swap_many``'s answers from the ``SWAP`` scripts': written, another writer first, or the quota's refusal."""
    results: list[bool | QuotaExceededError] = []
    for code, write in zip(codes, writes, strict=True):
        try:
            results.append(wire.outcome(code, write.quota))
        except QuotaExceededError as exc:
            results.append(exc)
    return results
