"""``Server(prometheus=True)`` (issue 38, item 4): ``GET /metrics`` on the HTTP app serves the server's metrics in
Prometheus' text format, behind the same sign-in as ``/mcp``, with no caller, key or value in any series."""

from __future__ import annotations

import pytest

from core._support import body_of, call_modern, running
from mcpkit import ConfigurationError, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

MARKER = "marker-e8b41d07"
KEYS = {"nour": "nour-key-0123456789abcdef", "prometheus": "scraper-key-0123456789abcdef"}


@tool(name="keep", description="Keeps a note.")
class Keep(ToolContext):
    async def execute(self, note: str) -> str:
        await self.remember.set(f"note-{MARKER}", note, scope="user")
        return "kept"


@app(id="notes", tools=[Keep], plugins=[RememberPlugin.init(type="memory")])
class Notes: ...


async def test_metrics_are_scraped_through_the_http_app_with_a_key_like_any_caller_s() -> None:
    server = Server([Notes], auth=StaticKeys(KEYS), prometheus=True)
    async with running(server.http_app()) as http:
        kept = body_of(await call_modern(http, "keep", {"note": MARKER}, token=KEYS["nour"]))
        assert kept["result"]["isError"] is False
        refused = await http.get("/metrics")
        wrong = await http.get("/metrics", headers={"Authorization": "Bearer not-a-key-of-this-server"})
        scraped = await http.get("/metrics", headers={"Authorization": f"Bearer {KEYS['prometheus']}"})
    assert refused.status_code == 401
    assert "www-authenticate" in refused.headers
    assert wrong.status_code == 401
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    text = scraped.text
    assert "mcp_server_operation_duration_seconds_count{" in text
    assert 'gen_ai_tool_name="keep"' in text
    # The set writes its value and its change history (on by default) in one swap_many.
    written = 'mcpkit_storage_operation_duration_seconds_count{db_operation_name="swap_many",db_system_name="memory"'
    assert written in text
    for secret in (MARKER, *KEYS.values(), "nour"):
        assert secret not in text, secret


async def test_an_anonymous_server_serves_its_metrics_to_anyone() -> None:
    server = Server([Notes], allow_anonymous=True, prometheus=True)
    async with running(server.http_app()) as http:
        assert (await http.get("/metrics")).text == ""  # nothing recorded yet
        await call_modern(http, "keep", {"note": "n"})
        scraped = await http.get("/metrics")
    assert scraped.status_code == 200
    [counted] = [
        line for line in scraped.text.splitlines() if line.startswith("mcp_server_operation_duration_seconds_c")
    ]
    assert 'gen_ai_tool_name="keep"' in counted


async def test_without_prometheus_there_is_no_metrics_route() -> None:
    server = Server([Notes], allow_anonymous=True)
    async with running(server.http_app()) as http:
        assert (await http.get("/metrics")).status_code == 404


def test_prometheus_takes_the_metrics_of_native_telemetry_only() -> None:
    with pytest.raises(ConfigurationError, match="telemetry='off' records none"):
        Server([Notes], allow_anonymous=True, prometheus=True, telemetry="off")
    with pytest.raises(ConfigurationError, match="records into a meter provider of its own"):
        Server([Notes], allow_anonymous=True, prometheus=True, meter_provider=object())  # type: ignore[arg-type]
