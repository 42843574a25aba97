"""OpenTelemetry for mcpkit: the server span of every MCP message per the MCP semantic conventions, trace context
from the client, the metrics and the memory audit, through the OpenTelemetry API only, so that without an SDK all of
it is a no-op."""

from ._audit import AuditLog, CallNote, current_call
from ._audit_sink import AuditSink
from ._audit_store import AuditStore
from ._instruments import Instruments
from ._otlp import OtlpExport
from ._server_spans import ServerSpans, install_server_spans, tool_error_type
from ._telemetry import MODES, Mode, Telemetry

__all__ = [
    "MODES",
    "AuditLog",
    "AuditSink",
    "AuditStore",
    "CallNote",
    "Instruments",
    "Mode",
    "OtlpExport",
    "ServerSpans",
    "Telemetry",
    "current_call",
    "install_server_spans",
    "tool_error_type",
]
