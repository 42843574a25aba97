"""The documentation builds as a static site with one command, and links nothing that is missing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_builds_the_site_strictly(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_every_page_the_readme_links_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", (ROOT / "README.md").read_text())
    assert links, "the README links no docs pages"
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README links missing pages: {missing}"


def test_the_errors_page_gives_the_number_of_update_attempts_the_code_makes() -> None:
    from mcpkit_remember._remember import _UPDATE_ATTEMPTS

    page = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    assert f"lost {_UPDATE_ATTEMPTS} attempts in a row" in page
