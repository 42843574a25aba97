"""``python -m bench.otel_cost``: what recording telemetry costs, in callgrind instructions per call of this checkout,
for the plain call (the same tool with no plugin) and the bench's memory call, with the OpenTelemetry API alone (no
SDK: every span and metric a no-op) and with the SDK configured (``bench/otel_sdk/sitecustomize.py``), in both eras.
``python -m bench.revisions`` compares the first with a revision from before telemetry."""

from __future__ import annotations

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


def _environment(sdk: bool) -> dict[str, str]:
    env = child_env()
    paths = ([str(_SDK)] if sdk else []) + [str(ROOT / source) for source in _SOURCES] + [str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


#: The plain call (the same tool with no plugin, static keys) beside the bench's memory call.
PLAIN = ServerSpec("mcpkit-plain", "mcpkit", {"store": "none"})


def _counted(spec: ServerSpec, era: str) -> dict[str, float]:
    alone, recorded = (
        per_call(spec, env=_environment(sdk), extra=["--era", era])["instructions_per_call"] for sdk in (False, True)
    )
    return {"api_only": alone, "sdk": recorded, "ratio": recorded / alone}


def main() -> None:
    specs = countable_specs()
    if specs is None:
        raise SystemExit("callgrind (valgrind) is not installed: nothing to count with")
    cases = (PLAIN, specs["mcpkit-memory"])
    wanted = [(spec, era) for spec in cases for era in ERAS]
    with ThreadPoolExecutor(max_workers=2) as pool:  # callgrind's counts do not depend on sharing a core
        counted = list(pool.map(lambda job: _counted(*job), wanted))
    report: dict[str, dict[str, dict[str, float]]] = {}
    for (spec, era), row in zip(wanted, counted, strict=True):
        report.setdefault(spec.name, {})[era] = row
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
