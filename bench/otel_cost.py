"""``python -m bench.otel_cost``: what recording telemetry costs the plain call, in callgrind instructions per call of
this checkout, with the OpenTelemetry API alone (no SDK: every span and metric a no-op) and with the SDK configured
(``bench/otel_sdk/sitecustomize.py``), in both eras. ``python -m bench.revisions`` compares the first with a revision
from before telemetry."""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def main() -> None:
    specs = countable_specs()
    if specs is None:
        raise SystemExit("callgrind (valgrind) is not installed: nothing to count with")
    spec = specs["mcpkit-memory"]
    eras = {}
    for era in ERAS:
        alone, recorded = (
            per_call(spec, env=_environment(sdk), extra=["--era", era])["instructions_per_call"]
            for sdk in (False, True)
        )
        eras[era] = {"api_only": alone, "sdk": recorded, "ratio": recorded / alone}
    print(json.dumps({"case": spec.name, "eras": eras}, indent=1))


if __name__ == "__main__":
    main()
