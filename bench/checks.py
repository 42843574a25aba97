"""Correctness before and after every load case, so a broken server can never look fast.

Before: each of the 64 users calls once (the baseline), one user's counter moves by exactly
one per call, another user's does not move with it, and a bad token gets 401 without touching
any counter. After: every user's counter is its baseline plus exactly the calls the client
made for it (plus the one checking call), and the bad token still gets 401.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench.cases import Case
from bench.tokens import BAD_TOKEN, LABELS, TOKENS
from bench.wire import call_once

__all__ = ["official_client_call", "post_check", "pre_check"]


def _count(port: int, label: str) -> int:
    status, result = call_once(port, TOKENS[label], "increment", {})
    if status != 200 or result is None or result.get("isError"):
        raise AssertionError(f"{label}: increment gave HTTP {status}, {result!r}")
    return int(result["structuredContent"]["count"])


def _reply(port: int, label: str) -> str:
    status, result = call_once(port, TOKENS[label], "draft_reply", {"ticketId": "T-1", "text": "check"})
    if status != 200 or result is None or result.get("isError"):
        raise AssertionError(f"{label}: draft_reply gave HTTP {status}, {result!r}")
    return str(result["structuredContent"]["reply"])


def _refusals(case: Case, port: int) -> list[str]:
    problems = []
    status, _ = call_once(port, BAD_TOKEN, case.tool, {})
    if status != 401:
        problems.append(f"a bad token got HTTP {status}, not 401")
    if case.requires_token:
        status, _ = call_once(port, None, case.tool, {})
        if status != 401:
            problems.append(f"no token got HTTP {status}, not 401")
    return problems


def pre_check(case: Case, port: int, tag: str) -> tuple[dict[str, Any], list[str]]:
    """(what the client should expect per user, problems found)."""
    problems: list[str] = []
    if case.tool == "increment":
        first, second = _count(port, "u00"), _count(port, "u00")
        other = _count(port, "u01")
        problems += _refusals(case, port)
        third = _count(port, "u00")
        if second != first + 1 or third != second + 1:
            problems.append(f"u00 counted {first}, {second}, {third} (a bad token or u01 moved it?)")
        if _count(port, "u01") != other + 1:
            problems.append("u01's counter did not move by exactly one")
        expected = {label: _count(port, label) for label in LABELS}
        return expected, problems
    problems += _refusals(case, port)
    expected = {}
    for label in LABELS:
        signature = f"{label} {tag}.pre"
        status, result = call_once(port, TOKENS[label], "set_signature", {"signature": signature})
        if status != 200 or result is None or result.get("isError"):
            problems.append(f"{label}: set_signature gave HTTP {status}")
        expected[label] = signature
    for label in LABELS:
        if not _reply(port, label).endswith("\n\n" + expected[label]):
            problems.append(f"{label}: draft_reply is not signed with its own signature")
    return expected, problems


def post_check(case: Case, port: int, expected: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """Problems with what the load left behind (empty when every count and signature is exact)."""
    problems = [f"client: {error}" for error in result.get("errors", [])]
    calls: dict[str, int] = result.get("per_user_calls", {})
    for label in LABELS:
        if case.tool == "increment":
            want = expected[label] + calls.get(label, 0) + 1
            got = _count(port, label)
            if got != want:
                problems.append(f"{label}: counter {got} after the load, expected exactly {want}")
        else:
            signature = result["last"].get(label, expected.get(label))
            if signature is not None and not _reply(port, label).endswith("\n\n" + signature):
                problems.append(f"{label}: draft_reply not signed {signature!r} after the load")
    problems += _refusals(case, port)
    return problems


def official_client_call(port: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One call through the official ``mcp`` client (mode 2026-07-28) with a bearer token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def call() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {TOKENS['u63']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
            async with Client(transport, mode="2026-07-28") as client:
                outcome = await client.call_tool(tool, arguments)
                if outcome.is_error:
                    raise AssertionError(f"official client: {tool} returned an error: {outcome.content!r}")
                return dict(outcome.structured_content or {})

    return asyncio.run(call())
