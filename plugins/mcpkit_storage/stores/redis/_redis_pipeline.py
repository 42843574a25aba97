"""Scripts sent together: one pipeline (not a transaction) of script calls, each atomic on its own, each answered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import ResponseError

from .. import QuotaExceededError, Write
from . import _redis_wire as wire

__all__ = ["pipelined", "swap_answers"]

#: One script call: its arguments and the keys it declares.
Call = tuple[Sequence[str | bytes], Sequence[str]]


async def pipelined(client: Redis, script: AsyncScript, calls: Sequence[Call]) -> list[Any]:
    """Each of ``calls`` to ``script`` in one pipeline: one round trip (and the pipeline's check that the script is
    loaded), whatever their number; each answer as the script gave it.

    A pipeline is not a transaction: when Redis refused some calls, the others ran. Every answer is read, and the
    failure raised says whether anything may have been made: the refusal itself when every call was refused before
    running (nothing was), else a plain ``ResponseError`` (``wire.reaching``: the change may have been made)."""
    async with client.pipeline(transaction=False) as pipe:
        for args, keys in calls:
            await script(keys=keys, args=args, client=pipe)
        answers: list[Any] = await pipe.execute(raise_on_error=False)
    refused = [answer for answer in answers if isinstance(answer, Exception)]
    if refused:
        if len(refused) == len(answers) and all(wire.refused_before_running(error) for error in refused):
            raise refused[0]
        raise ResponseError(f"{len(refused)} of {len(answers)} pipelined writes failed, the others ran: {refused[0]}")
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
