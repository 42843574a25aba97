"""The conventions' metrics (issue 38): ``mcp.server.operation.duration`` per request with bounded attributes (no
caller, no session, no argument), and ``mcp.server.session.duration`` once a 2025-11-25 session ends."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from core._support import ACCEPT, LEGACY, call_legacy, open_legacy_session, running
from telemetry.test_error_spans import points
from telemetry.test_server_spans import everything

BOUNDED = {"mcp.method.name", "mcp.protocol.version", "gen_ai.tool.name", "error.type"}


async def test_a_session_s_duration_is_recorded_when_it_ends_and_no_point_names_a_caller() -> None:
    reader = InMemoryMetricReader()
    async with running(everything(reader).http_app()) as http:
        session = await open_legacy_session(http)
        assert (await call_legacy(http, session, "test_simple_text")).status_code == 200
        assert points(reader, "mcp.server.session.duration") == []
        ended = await http.delete("/mcp", headers={**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
        assert ended.status_code == 200
    [lasted] = points(reader, "mcp.server.session.duration")
    assert dict(lasted.attributes) == {"mcp.protocol.version": LEGACY}
    assert lasted.count == 1
    operations: list[Any] = points(reader, "mcp.server.operation.duration")
    methods = {point.attributes["mcp.method.name"] for point in operations}
    assert {"initialize", "notifications/initialized", "tools/call"} <= methods
    for point in operations:
        assert set(point.attributes) <= BOUNDED, point.attributes
        assert session not in repr(point.attributes)
