"""Node 22, the conformance suite and the TypeScript SDK for the tests that drive outside programs: the pinned npm
toolchain ``tests/conformance/run.py`` installs (and caches), and a way to run a Node script beside it."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ci import missing

RUN = Path(__file__).resolve().parent / "conformance" / "run.py"

__all__ = ["RUN", "node_script", "runner"]


def runner() -> ModuleType:
    """``tests/conformance/run.py`` as a module (it is a script, outside any package)."""
    name = "mcpkit_conformance_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, RUN)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


def node_script(script: Path) -> tuple[Path, Path]:
    """Node 22 and a copy of ``script`` in the toolchain's folder, where its imports of the TypeScript SDK resolve
    (ES modules resolve packages from the script's own folder). Skips, saying why, without npm or the registry
    (fails under ``CI=true``)."""
    run: Any = runner()
    try:
        toolchain = run.ensure_toolchain(run.cache_dir())
    except run.Unavailable as exc:
        missing(f"Node 22 and the TypeScript SDK cannot be had here: {exc}")
    placed = toolchain.home / f"mcpkit-test-{script.name}"
    shutil.copyfile(script, placed)
    return toolchain.node, placed
