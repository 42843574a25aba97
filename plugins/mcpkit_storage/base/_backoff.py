"""``backoff``: how a writer that lost a compare-and-set waits before it reads and tries again."""

from __future__ import annotations

import random

import anyio

__all__ = ["backoff"]


async def backoff(attempt: int) -> None:
    """After a lost compare-and-set: wait a little (jittered, growing), so racing writers spread out."""
    await anyio.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
