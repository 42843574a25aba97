"""The metric instruments mcpkit records into, all in one place so that their names and attributes stay bounded."""

from __future__ import annotations

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider

__all__ = ["Instruments"]

#: The MCP conventions' advised buckets for operation and session durations, in seconds.
_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: Store operations, searches and embeddings take from tens of microseconds to seconds.
_STORE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Instruments:
    """The ``mcpkit`` meter's instruments; their attributes are the server's own names and codes, never a caller's."""

    def __init__(self, meter_provider: MeterProvider | None) -> None:
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("mcpkit")
        #: How long each MCP request took, by ``mcp.method.name``, ``gen_ai.tool.name``, ``error.type``, era.
        self.operation_duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="Duration of an MCP request as the server handled it.",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )
        #: How long each 2025-11-25 session lasted, from its first request to its end.
        self.session_duration = meter.create_histogram(
            "mcp.server.session.duration",
            unit="s",
            description="Duration of an MCP session (2025-11-25 era) on the server.",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )
        #: Requests refused before they reached a handler, by ``mcpkit.refusal.reason`` (e.g. ``TOO_MANY_CALLS``).
        self.admission_refusals = meter.create_counter(
            "mcpkit.admission.refusals",
            unit="{request}",
            description="MCP requests refused at admission, by reason.",
        )
        #: Each store operation of a plugin, by ``db.system.name`` and ``db.operation.name`` (read, write, ...).
        self.storage_duration = meter.create_histogram(
            "mcpkit.storage.operation.duration",
            unit="s",
            description="Duration of a plugin's store operation, by store and operation.",
            explicit_bucket_boundaries_advisory=_STORE_BUCKETS,
        )
        #: Each search of stored values, by ``mcpkit.search.mode`` (lexical, semantic, hybrid).
        self.search_duration = meter.create_histogram(
            "mcpkit.search.duration",
            unit="s",
            description="Duration of a search of stored values, by mode.",
            explicit_bucket_boundaries_advisory=_STORE_BUCKETS,
        )
        #: Each embedding of values or a query (the model's work and the wait for its turn).
        self.embedding_duration = meter.create_histogram(
            "mcpkit.embedding.duration",
            unit="s",
            description="Duration of embedding values or a query, including the wait for the embedder.",
            explicit_bucket_boundaries_advisory=_STORE_BUCKETS,
        )
        #: Writes refused because an owner's quota was full, by ``mcpkit.quota.limit`` (values, bytes).
        self.quota_refusals = meter.create_counter(
            "mcpkit.quota.refusals",
            unit="{write}",
            description="Writes refused because the owner's quota in the scope was full, by limit.",
        )
        #: Tasks that reached a status, by ``mcpkit.task.status`` (working, completed, failed, cancelled, ...).
        self.tasks = meter.create_counter(
            "mcpkit.tasks",
            unit="{task}",
            description="Tasks that reached a status, by status.",
        )
