"""OpenTelemetry for mcpkit: the server span of every MCP message per the MCP semantic conventions, trace context
from the client, and the metrics, through the OpenTelemetry API only, so that without an SDK all of it is a no-op."""

from ._instruments import Instruments
from ._otlp import OtlpExport
from ._server_spans import ServerSpans, install_server_spans, tool_error_type
from ._telemetry import MODES, Mode, Telemetry

__all__ = [
    "MODES",
    "Instruments",
    "Mode",
    "OtlpExport",
    "ServerSpans",
    "Telemetry",
    "install_server_spans",
    "tool_error_type",
]
