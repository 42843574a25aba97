"""``python -m bench.otel_cost``: what recording telemetry costs, in callgrind instructions per call of this checkout,
for the plain call (the same tool with no plugin) and the bench's memory call, with the OpenTelemetry API alone (no
SDK: every span and metric a no-op) and with the SDK configured (``bench/otel_sdk/sitecustomize.py``), in both eras.
``--ratio 0.1`` also counts the memory call with the SDK sampling that share of calls (``parentbased_traceidratio``: the
bench's calls carry no trace context, so each is a root sampled by its trace id; the count moves with how many of
the counted calls drew a sampled id). ``python -m bench.revisions`` compares the first with a revision from before
telemetry."""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.cases import ServerSpec
from bench.instructions import countable_specs, per_call
from bench.procs import ROOT, child_env
from bench.revisions import ERAS

_SDK = Path(__file__).resolve().parent / "otel_sdk"
_SOURCES = ("framework", "plugins", "apps")


def environment(sdk: bool, ratio: float | None = None) -> dict[str, str]:
    """The driver's environment: this checkout's sources, with the SDK configured first where ``sdk`` (sampling
    ``ratio`` of the calls, or every one)."""
    env = child_env()
    if ratio is not None:
        env.update(OTEL_TRACES_SAMPLER="parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG=str(ratio))
    paths = ([str(_SDK)] if sdk else []) + [str(ROOT / source) for source in _SOURCES] + [str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


#: The plain call (the same tool with no plugin, static keys) beside the bench's memory call.
PLAIN = ServerSpec("mcpkit-plain", "mcpkit", {"store": "none"})


def _counted(spec: ServerSpec, era: str, ratio: float | None) -> dict[str, float]:
    def count(sdk: bool, sampled: float | None = None) -> float:
        return float(per_call(spec, env=environment(sdk, sampled), extra=["--era", era])["instructions_per_call"])

    alone, recorded = count(False), count(True)
    row = {"api_only": alone, "sdk": recorded, "ratio": recorded / alone}
    if ratio is not None and spec.name != PLAIN.name:
        row["sdk_sampled"] = sampled = count(True, ratio)
        row["sampled_ratio"] = sampled / alone
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.otel_cost")
    parser.add_argument("--ratio", type=float, help="also count the memory call sampling this share of calls")
    args = parser.parse_args(argv)
    specs = countable_specs()
    if specs is None:
        raise SystemExit("callgrind (valgrind) is not installed: nothing to count with")
    cases = (PLAIN, specs["mcpkit-memory"])
    wanted = [(spec, era) for spec in cases for era in ERAS]
    with ThreadPoolExecutor(max_workers=2) as pool:  # callgrind's counts do not depend on sharing a core
        counted = list(pool.map(lambda job: _counted(job[0], job[1], args.ratio), wanted))
    report: dict[str, dict[str, dict[str, float]]] = {}
    for (spec, era), row in zip(wanted, counted, strict=True):
        report.setdefault(spec.name, {})[era] = row
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
