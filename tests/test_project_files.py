"""The files a project is judged by besides its code (issue 36): LICENSE is the MIT licence pyproject names, and
CHANGELOG.md keeps Keep a Changelog's shape from the version pyproject names, links only pages and headings that
exist, and states the defaults the code has."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

from markdown.extensions.toc import slugify

import mcpkit
import mcpkit.http._body_limit as body_limit
from mcpkit import Server
from mcpkit.elicitation import DEFAULT_QUESTION_TIMEOUT
from mcpkit.http import DEFAULT_CALLS_PER_CALLER, ConnectionLimits
from mcpkit_remember._options import RememberOptions
from mcpkit_storage import INDEX_BYTES_PER_WORD

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: Keep a Changelog's kinds of change, and the section saying what an upgrade from the last version needs.
SECTIONS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security", f"Upgrading from {PROJECT['version']}"}


def test_the_license_is_the_mit_licence_pyproject_names_with_the_authors_copyright() -> None:
    text = (ROOT / "LICENSE").read_text()

    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert text.startswith("MIT License\n\nCopyright (c) 2026 The mcpkit authors\n\nPermission is hereby granted, free")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_changelog_has_unreleased_changes_over_the_version_pyproject_names() -> None:
    versions = re.findall(r"^## (.+)$", CHANGELOG, re.MULTILINE)
    sections = set(re.findall(r"^### (.+)$", CHANGELOG, re.MULTILINE))

    assert CHANGELOG.startswith("# Changelog\n")
    assert versions == ["[Unreleased]", f"[{PROJECT['version']}] - 2026-11-30"]
    assert PROJECT["version"] == mcpkit.__version__
    assert sections <= SECTIONS, sections - SECTIONS


def anchors(page: Path) -> set[str]:
    """The ids mkdocs gives the headings of ``page`` (code spans and links reduced to their text)."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S), re.M)
    return {slugify(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", ""), "-") for heading in headings}


def test_every_page_and_heading_the_changelog_links_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", CHANGELOG)
    broken = [
        f"{page}#{anchor}" if anchor else page
        for page, anchor in links
        if not (ROOT / page).is_file() or (anchor and anchor not in anchors(ROOT / page))
    ]

    assert len(links) > 30
    assert broken == []


def test_the_defaults_the_changelog_states_are_the_codes() -> None:
    served = inspect.signature(Server.http_app).parameters
    remembered = RememberOptions()
    built = inspect.signature(Server).parameters
    stated = [
        f"`calls_per_caller` ({DEFAULT_CALLS_PER_CALLER})",
        f"`question_timeout` ({DEFAULT_QUESTION_TIMEOUT:g} s)",
        f"`turn_timeout` ({built['turn_timeout'].default:g} s)",
        f"`write_timeout` ({ConnectionLimits().write_timeout:g} s)",
        f"`max_values` ({remembered.max_values:,})",
        f"`max_bytes` ({remembered.max_bytes // 2**20} MiB)",
        f"counts {INDEX_BYTES_PER_WORD} bytes for each indexed word",
        f"Bodies over {body_limit.DEFAULT_MAX_BODY_BYTES // 1024} KiB get 413",
        f"at most {served['sessions_per_caller'].default} 2025-11-25 sessions",
        f"the server {served['max_sessions'].default:,}",
    ]

    assert [line for line in stated if line not in " ".join(CHANGELOG.split())] == []
