"""The demo apps' commands work from any folder (issue 36): ``mcpkit-helpdesk`` and ``mcpkit-memoryserver`` do not look
in the current folder first, as ``python -m`` does, so a folder of the user's named like a package (``mcpkit``)
cannot stand in for it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(sys.executable).parent


@pytest.mark.parametrize(
    ("command", "names"), [("mcpkit-helpdesk", "HELPDESK_KEYS"), ("mcpkit-memoryserver", "MEMORY_KEYS")]
)
def test_a_demo_command_works_beside_a_folder_named_like_a_package(tmp_path: Path, command: str, names: str) -> None:
    (tmp_path / "mcpkit").mkdir()
    (tmp_path / "mcpkit" / "__init__.py").write_text("raise ImportError('the user folder, not the package')\n")
    script = shutil.which(command, path=str(SCRIPTS)) or shutil.which(command)
    assert script is not None, f"{command} is not installed beside {sys.executable}: pip install -e ."

    done = subprocess.run([script, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    shadowed = subprocess.run(
        [sys.executable, "-m", command.replace("-", "_"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert names in done.stdout
    assert shadowed.returncode != 0  # python -m looks in the current folder first: why the commands exist
