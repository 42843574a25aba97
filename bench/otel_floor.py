"""``python -m bench.otel_floor``: what the OpenTelemetry SDK itself costs per span and per metric point, in callgrind
instructions, with the SDK configured as ``bench.otel_cost`` has it (``bench/otel_sdk``): the floor under which no
change to mcpkit can bring a recorded store operation, whatever mcpkit does around it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from bench.instructions import available
from bench.procs import ROOT

__all__ = ["main"]

#: Each part's loop runs ``FEW`` and ``MANY`` times; the difference over ``MANY - FEW``, less the empty loop's, is
#: one part's cost.
FEW, MANY = 200, 1200
#: A store operation's bounded attributes, as mcpkit gives them (the key's hash a fixed 16 hex digits).
_ATTRIBUTES: dict[str, str | bool] = {
    "db.system.name": "memory",
    "db.operation.name": "read",
    "mcpkit.memory.scope": "user",
    "mcpkit.memory.key": "0123456789abcdef",
    "mcpkit.memory.hit": True,
}
_POINT: dict[str, str] = {"db.system.name": "memory", "db.operation.name": "read"}


def _parts() -> dict[str, Callable[[], None]]:
    """name -> one iteration, each under a recording SERVER span made current (as inside a call)."""
    from opentelemetry import context, metrics, trace
    from opentelemetry.trace import SpanKind

    tracer = trace.get_tracer("floor")
    histogram = metrics.get_meter("floor").create_histogram("floor.duration", unit="s")
    current_span = trace.get_current_span
    outside = context.Context()

    def empty() -> None:
        current_span()

    def span() -> None:
        current_span()
        tracer.start_span("read memory", kind=SpanKind.CLIENT).end()

    def span_attributes() -> None:
        current_span()
        tracer.start_span("read memory", kind=SpanKind.CLIENT, attributes=_ATTRIBUTES).end()

    def made_current(name: str, kind: SpanKind) -> Callable[[], None]:
        def part() -> None:
            current_span()
            opened = tracer.start_span(name, kind=kind, attributes=_ATTRIBUTES)
            context.detach(context.attach(trace.set_span_in_context(opened)))
            opened.end()

        return part

    def point() -> None:
        current_span()
        histogram.record(0.001, _POINT)

    def point_alone() -> None:  # as outside a sampled call: no exemplar offered (the SDK's trace_based filter)
        current_span()
        histogram.record(0.001, _POINT, context=outside)

    return {
        "empty loop": empty,
        "span": span,
        "span with 5 attributes": span_attributes,
        "span with 5 attributes, made current": made_current("read memory", SpanKind.CLIENT),
        "histogram point, 2 attributes": point,
        "histogram point, 2 attributes, no sampled span": point_alone,
        "server span with 5 attributes, made current": made_current("tools/call increment", SpanKind.SERVER),
    }


def _child(part: str, count: int) -> None:
    from opentelemetry import trace

    one = _parts()[part]
    with trace.get_tracer("floor").start_as_current_span("call", kind=trace.SpanKind.SERVER):
        for _ in range(50):
            one()
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
        for _ in range(count):
            one()
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)


def _counted(part: str, count: int) -> int:
    from bench.otel_cost import environment

    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--instr-atstart=no"]
    command += [sys.executable, "-m", "bench.otel_floor", "--child", part, str(count)]
    done = subprocess.run(command, cwd=ROOT, env=environment(True), capture_output=True, timeout=1800, check=False)
    found = [line for line in done.stderr.decode().splitlines() if "Collected :" in line]
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{part}: callgrind run failed ({done.returncode}): {done.stderr[-800:]!r}")
    return int(found[-1].rsplit(":", 1)[1])


def main() -> None:
    if not available():
        raise SystemExit("callgrind (valgrind) is not installed: nothing to count with")
    from opentelemetry.sdk.trace import TracerProvider  # noqa: F401  (the SDK must be installed)

    names = list(_parts())
    jobs = [(name, count) for name in names for count in (FEW, MANY)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        totals = list(pool.map(lambda job: _counted(*job), jobs))
    each = {name: (totals[2 * i + 1] - totals[2 * i]) / (MANY - FEW) for i, name in enumerate(names)}
    loop = each.pop("empty loop")
    print(json.dumps({name: round(cost - loop) for name, cost in each.items()}, indent=1))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
