"""Over stdio too (issue 38): a call from the official client through ``mcpkit run --stdio`` is one trace, the
client's span parenting the server's, with the conventions' attributes and no session id (stdio has none)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telemetry.recording import PROVIDER, Receiver, assert_continues

SERVED = textwrap.dedent(
    '''
    """Served over stdio, exporting its spans over OTLP to the test's receiver (flushed at exit)."""

    import os

    from mcpkit import OtlpExport, Server, ToolContext, app, tool


    @tool(name="echo", description="Answers with the text it was given.")
    class Echo(ToolContext):
        async def execute(self, text: str) -> str:
            return text


    @app(id="served", tools=[Echo])
    class Served: ...


    export = OtlpExport(os.environ["OTLP_URL"], "stdio-test")
    server = Server([Served], tracer_provider=export.tracer_provider, meter_provider=export.meter_provider)
    '''
)


async def test_a_stdio_call_continues_the_clients_trace(
    receiver: Receiver, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    (tmp_path / "served.py").write_text(SERVED)
    env = {**os.environ, "OTLP_URL": f"http://127.0.0.1:{receiver.server_port}", "NO_PROXY": "127.0.0.1"}
    command = ["-m", "mcpkit", "run", "served.py:server", "--stdio", "--user", "nour"]
    parameters = StdioServerParameters(command=sys.executable, args=command, env=env, cwd=str(tmp_path))
    with PROVIDER.get_tracer("agent").start_as_current_span("agent turn") as turn:
        async with Client(stdio_client(parameters)) as client:
            result = await client.call_tool("echo", {"text": "hello"})
    assert not result.is_error
    span = assert_continues(receiver, "tools/call echo", turn, spans)
    attributes = {item.key: item.value.string_value for item in span.attributes}
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["mcp.method.name"] == "tools/call"
    assert "mcp.session.id" not in attributes
