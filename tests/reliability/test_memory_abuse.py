"""What one caller can make a server spend or keep: caller-controlled patterns, floods of values.

A real ``mcpkit run`` process of ``exposed.py`` (anonymous callers allowed, the memory tools in every scope)
on loopback, called with the official ``mcp`` client. While an anonymous attacker sends ``list_memories``
patterns built to be expensive, another caller's latency is measured; floods of writes meet the quotas.
"""

from __future__ import annotations

import asyncio
import base64
import sqlite3
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit.testing import error_code
from reliability.exposed import KEYS
from reliability.figures import Figures
from reliability.processes import ServerProcess

EXPOSED = f"{Path(__file__).with_name('exposed.py')}:server"
SECRET = "exposed-test-secret-0123456789abcdef"
ATTACKERS = 8
ATTACK_SECONDS = 4.0
#: The bound on a legitimate caller's slowest call while the attack runs (its calls take milliseconds).
LATENCY_BOUND_SECONDS = 0.5


@asynccontextmanager
async def client(url: str, key: str | None, mode: str = "2026-07-28") -> AsyncIterator[Client]:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as connected,
    ):
        yield connected


def evil_pattern(number: int) -> str:
    """255 characters of classes spanning U+0100-U+10FFFF, a distinct one each time (nothing can be cached)."""
    wide = "[\u0100-\U0010ffff]"
    body = wide * (254 // len(wide))
    unique = chr(0x4E00 + number // 20000 % 20000) + chr(0x4E00 + number % 20000)
    return (unique + body)[:255]


def every_position(number: int) -> str:
    """255 characters: a unique one, then '?' everywhere: a pattern that every key's every character passes."""
    return chr(0x4E00 + number % 20000) + "*" + "?" * 253


def few_wide_classes(number: int) -> str:
    """As many wide classes as a pattern may hold, between stars: each character of each key tests them all."""
    return chr(0x4E00 + number % 20000) + "*" + "[\u0100-\U0010ffff]*" * 16


PATTERNS = (evil_pattern, every_position, few_wide_classes)
KEYS_WRITTEN = 200


def text(result: mcp_types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


async def test_expensive_glob_patterns_from_an_anonymous_caller_never_stall_other_callers(
    tmp_path: Path, figures: Figures
) -> None:
    env = {"REMEMBER_STORE": "memory", "REMEMBER_SECRET": SECRET}
    process = ServerProcess(EXPOSED, cwd=tmp_path, env=env).start()
    attacks = refused = 0
    try:
        async with client(process.url, KEYS["nour"]) as nour:
            for number in range(KEYS_WRITTEN):  # keys of many distinct characters: each costs the matcher a look
                key = "".join(chr(0x100 + (number * 7 + at) % 3000) for at in range(250))
                await nour.call_tool("remember_this", {"key": key, "value": "x", "scope": "global"})
        async with client(process.url, KEYS["sam"]) as sam:
            at_rest = [await timed(sam) for _ in range(20)]

            stop = time.monotonic() + ATTACK_SECONDS

            async def attacker(number: int) -> int:
                nonlocal refused
                sent = 0
                async with client(process.url, None) as anonymous:
                    while time.monotonic() < stop:
                        pattern = PATTERNS[sent % len(PATTERNS)](number * 10_000 + sent)
                        arguments = {"scope": "global", "pattern": pattern}
                        result = await anonymous.call_tool("list_memories", arguments)
                        if result.is_error:  # too many classes: refused before any work, naming the limit
                            assert error_code(result) == "REMEMBER_INVALID", text(result)
                            refused += 1
                        sent += 1
                return sent

            attack = [asyncio.create_task(attacker(number)) for number in range(ATTACKERS)]
            await asyncio.sleep(0.2)
            under_attack = []
            while time.monotonic() < stop - 0.2:
                under_attack.append(await timed(sam))
            attacks = sum(await asyncio.gather(*attack))
    finally:
        process.kill()
    slowest = max(under_attack)
    figures.record(
        callers=ATTACKERS + 1,
        calls=len(at_rest) + len(under_attack) + attacks,
        inputs=attacks,
        detail=(
            f"{ATTACKERS} anonymous callers sent {attacks} distinct list_memories patterns of up to 255 characters "
            f"(wide character classes, '?' at every position; {refused} refused for holding too many classes) over "
            f"{KEYS_WRITTEN} global keys of 250 distinct characters each, for {ATTACK_SECONDS:.0f} s; another "
            "caller's calls took "
            f"{statistics.median(at_rest) * 1000:.0f} ms (median) at rest and "
            f"{statistics.median(under_attack) * 1000:.0f} ms median, {slowest * 1000:.0f} ms slowest meanwhile "
            f"(bound {LATENCY_BOUND_SECONDS * 1000:.0f} ms)"
        ),
    )
    assert attacks > ATTACKERS  # the attack really ran
    assert slowest < LATENCY_BOUND_SECONDS, f"slowest call {slowest:.3f} s under attack"


async def timed(sam: Client) -> float:
    started = time.monotonic()
    result = await sam.call_tool("ping", {})
    assert not result.is_error
    return time.monotonic() - started


async def test_floods_of_values_stop_at_the_quotas_and_anonymous_callers_cannot_write_global_values(
    tmp_path: Path, figures: Figures
) -> None:
    database = tmp_path / "exposed.db"
    env = {
        "REMEMBER_STORE": f"sqlite:///{database}",
        "REMEMBER_SECRET": SECRET,
        "EXPOSED_MAX_VALUES": "100",
        "EXPOSED_MAX_BYTES": str(2 * 65536),
    }
    process = ServerProcess(EXPOSED, cwd=tmp_path, env=env).start()
    codes: dict[str, int] = {}
    calls = 0

    async def write(connected: Client, arguments: dict[str, Any]) -> str | None:
        nonlocal calls
        calls += 1
        result = await connected.call_tool("remember_this", arguments)
        code = error_code(result) if result.is_error else None
        if code is not None:
            codes[code] = codes.get(code, 0) + 1
        return code

    try:
        async with client(process.url, KEYS["nour"]) as nour:
            counted = [await write(nour, {"key": f"note-{n}", "value": n, "scope": "user"}) for n in range(150)]
            big = "x" * 30_000
            sized = [await write(nour, {"key": f"big-{n}", "value": big, "scope": "session"}) for n in range(8)]
            replaced = await write(nour, {"key": "note-0", "value": "replacing adds nothing", "scope": "user"})
        async with client(process.url, None) as anonymous:
            global_writes = [
                await write(anonymous, {"key": f"spam-{n}", "value": "x" * 1000, "scope": "global"}) for n in range(50)
            ]
        sessions = []
        for _ in range(5):  # anonymous callers with 2025-11-25 sessions: each session a new owner, so refused too
            async with client(process.url, None, "legacy") as session:
                sessions.append([await write(session, {"key": f"s-{n}", "value": n}) for n in range(20)])
    finally:
        process.stop()
    with sqlite3.connect(database) as db:
        (stored,) = db.execute("SELECT count(*) FROM remember_entries").fetchone()
    figures.record(
        callers=2 + len(sessions),
        calls=calls,
        detail=(
            f"quotas of 100 values and 128 KiB per caller and scope: {counted.count(None)} of 150 notes kept, "
            f"{sized.count(None)} of 8 values of 30 kB; {global_writes.count(None)} of 50 anonymous global writes "
            f"accepted; 5 anonymous sessions kept {sum(s.count(None) for s in sessions)} of 100; refusals by code: "
            f"{dict(sorted(codes.items()))}; {stored} entries in the store afterwards"
        ),
    )
    # Each note is two entries of the 100, its value and its change history (on by default) ...
    assert counted == [None] * 50 + ["REMEMBER_QUOTA_EXCEEDED"] * 100
    # ... and each 30 kB value holds 60 kB with its history's copy: 2 fit in 128 KiB, a third does not.
    assert sized == [None] * 2 + ["REMEMBER_QUOTA_EXCEEDED"] * 6
    assert replaced is None
    assert global_writes == ["REMEMBER_IDENTITY_REQUIRED"] * 50
    assert all(written == ["REMEMBER_IDENTITY_REQUIRED"] * 20 for written in sessions)
    assert stored == 50 * 2 + 2 * 2  # the notes and the large values kept, each with its history


async def test_a_list_memories_cursor_shows_nothing_and_cannot_be_steered(tmp_path: Path, figures: Figures) -> None:
    env = {"REMEMBER_STORE": "memory", "REMEMBER_SECRET": SECRET}
    process = ServerProcess(EXPOSED, cwd=tmp_path, env=env).start()
    refused: list[str | None] = []
    try:
        async with client(process.url, KEYS["nour"]) as nour:
            for number in range(3):
                arguments = {"key": f"ticket:T-{number}-marigold", "value": number, "scope": "user"}
                await nour.call_tool("remember_this", arguments)
            page = (await nour.call_tool("list_memories", {"scope": "user", "limit": 1})).structured_content
            assert page is not None
            cursor: str = page["nextCursor"]
            sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            shown = [word for word in (b"marigold", b"ticket", b"T-0") if word in sealed or word in cursor.encode()]
            forged = base64.urlsafe_b64encode(sealed[:-1] + bytes([sealed[-1] ^ 1])).decode().rstrip("=")
            for candidate in (forged, cursor[:-3], "eyJrZXkiOiAiYSJ9"):
                result = await nour.call_tool("list_memories", {"scope": "user", "cursor": candidate})
                refused.append(error_code(result) if result.is_error else None)
        async with client(process.url, KEYS["sam"]) as sam:
            result = await sam.call_tool("list_memories", {"scope": "user", "cursor": cursor})
            refused.append(error_code(result) if result.is_error else None)
    finally:
        process.kill()
    figures.record(
        inputs=len(refused),
        leaks=len(shown) + sum(code is None for code in refused),
        detail="a list_memories cursor (AES-GCM sealed) shows none of the key it continues after; a flipped bit, "
        f"a truncation, a hand-made one and Nour's cursor presented by Sam were refused: {refused}",
    )
    assert shown == []
    assert refused == ["REMEMBER_INVALID"] * 4
