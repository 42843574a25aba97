"""``Telemetry``: one server's mode, tracer and instruments, which every module that records anything goes through."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Literal, get_args

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, StatusCode, TracerProvider

from ..base import ConfigurationError
from ._audit_sink import AuditSink
from ._instruments import Instruments
from ._prometheus import PrometheusScrape

__all__ = ["MODES", "Mode", "Telemetry"]

Mode = Literal["native", "propagation", "off"]
#: ``native``: spans and metrics; ``propagation``: the client's trace context carried on, nothing recorded;
#: ``off``: nothing at all, not even the SDK's own span.
MODES: tuple[Mode, ...] = get_args(Mode)

#: The attribute values a child span may carry: bounded, never a value the caller sent.
Attribute = str | int | float | bool


class Telemetry:
    """What a server records and where: checked when the ``Server`` is built, so a wrong mode fails at once."""

    def __init__(
        self,
        mode: object = "native",
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        resource_uris: bool = False,
        callers: bool = False,
        key_labels: bool = False,
        audit: AuditSink | None = None,
        prometheus: bool = False,
    ) -> None:
        if mode not in MODES:
            raise ConfigurationError(
                f"Server(telemetry=...) is one of {', '.join(repr(m) for m in MODES)}, not {mode!r:.60}."
            )
        for name, flag in (("resource_uris", resource_uris), ("callers", callers), ("key_labels", key_labels)):
            if not isinstance(flag, bool):
                raise ConfigurationError(f"telemetry_{name} is True or False, not {flag!r:.60}.")
        if not isinstance(prometheus, bool):
            raise ConfigurationError(f"Server(prometheus=...) is True or False, not {prometheus!r:.60}.")
        #: Serves ``GET /metrics`` (``Server(prometheus=True)``): the server's metrics, and its meter provider.
        self.scrape: PrometheusScrape | None = None
        if prometheus:
            if meter_provider is not None:
                raise ConfigurationError(
                    "Server(prometheus=True) records into a meter provider of its own: leave out meter_provider=, "
                    "or add a PrometheusMetricReader to your own provider and serve it yourself."
                )
            if mode != "native":
                raise ConfigurationError(
                    f"Server(prometheus=True) serves metrics, which telemetry={mode!r} records none of."
                )
            self.scrape = PrometheusScrape()
            meter_provider = self.scrape.meter_provider
        if audit is not None and not isinstance(audit, AuditSink):
            raise ConfigurationError(
                f"Server(audit=...) is an mcpkit.AuditLog(path, ...) or AuditStore(url, ...), not {audit!r:.60}."
            )
        self.mode: Mode = mode
        #: Whether ``resources/read`` spans carry ``mcp.resource.uri`` (an app opts in: a URI may name a person).
        self.resource_uris = resource_uris
        #: Whether memory spans carry the caller's hashed id (``mcpkit.memory.caller``): an app opts in.
        self.callers = callers
        #: Whether memory spans and audit lines carry a key's label (its text up to the first ``:``) beside its hash.
        self.key_labels = key_labels
        #: Where every memory operation is written (``Server(audit=...)``), or None.
        self.audit = audit
        self._meter_provider = meter_provider
        self._metering = meter_provider is not None
        self.tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("mcpkit")
        self.instruments = Instruments(meter_provider)
        #: 2025-11-25 sessions seen -> when their first request arrived (``time.monotonic``).
        self._sessions: dict[str, float] = {}

    @property
    def native(self) -> bool:
        """Whether spans and metrics are recorded (``propagation`` and ``off`` record nothing)."""
        return self.mode == "native"

    def metering(self) -> bool:
        """Whether a metrics SDK records what the instruments are given (else the work of a point is skipped)."""
        if not self._metering and self.native:
            self._metering = not type(metrics.get_meter_provider()).__module__.startswith("opentelemetry.metrics")
        return self._metering and self.native

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, Attribute]) -> Iterator[Span]:
        """A child span of the current one for work inside a call (a store operation, a search), with ``attributes``
        that must be bounded: operation names, store kinds, sizes, hashed ids; never a value, key or token."""
        if not self.native:
            yield trace.INVALID_SPAN
            return
        with self.tracer.start_as_current_span(
            name, kind=SpanKind.INTERNAL, record_exception=False, set_status_on_exception=False
        ) as span:
            if span.is_recording():
                span.set_attributes(attributes)
            try:
                yield span
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR)  # no description: an exception's text may carry a value
                raise

    @contextmanager
    def task_span(self, tool: str) -> Iterator[Span]:
        """The span of a task's work, in a trace of its own linked to the request that started or resumed it (the
        current span when called), which has ended long before the work does."""
        if not self.native:
            yield trace.INVALID_SPAN
            return
        started_by = trace.get_current_span().get_span_context()
        with self.tracer.start_as_current_span(
            f"task {tool}",
            context=Context(),
            kind=SpanKind.INTERNAL,
            links=[Link(started_by)] if started_by.is_valid else None,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield span

    @staticmethod
    def failed(span: Span, error_type: str) -> None:
        """Mark ``span`` failed with ``error_type`` (a code, never a message)."""
        if span.is_recording():
            span.set_attribute("error.type", error_type)
            span.set_status(StatusCode.ERROR)

    @staticmethod
    def link(to: SpanContext | None) -> None:
        """Link the current span (a ``tasks/get``, say) to ``to`` (the task's work), when both record."""
        span = trace.get_current_span()
        if to is not None and span.is_recording():
            span.add_link(to)

    def refused(self, reason: str, method: str | None) -> None:
        """Record a request refused before any handler saw it (``TOO_MANY_CALLS``): a counter and an error span."""
        if not self.native:
            return
        self.instruments.admission_refusals.add(1, {"mcpkit.refusal.reason": reason})
        name = method if isinstance(method, str) and len(method) <= 64 else "unknown"
        with self.tracer.start_as_current_span(name, kind=SpanKind.SERVER) as span:
            if span.is_recording():
                span.set_attributes({"mcp.method.name": name, "error.type": reason})
                span.set_status(StatusCode.ERROR)

    def task_status(self, status: str, tool: str) -> None:
        """Count a task reaching ``status`` (``working`` when it starts), for ``mcpkit.tasks``."""
        if self.native:
            self.instruments.tasks.add(1, {"mcpkit.task.status": status, "gen_ai.tool.name": tool})

    def session_seen(self, session: str) -> None:
        """Note when a 2025-11-25 session was first seen, for ``mcp.server.session.duration``."""
        if session not in self._sessions:
            self._sessions[session] = time.monotonic()

    def session_ended(self, session: str, protocol_version: str = "2025-11-25") -> None:
        """Record how long the session lasted, once it has ended."""
        started = self._sessions.pop(session, None)
        if started is not None:
            self.instruments.session_duration.record(
                time.monotonic() - started, {"mcp.protocol.version": protocol_version}
            )
