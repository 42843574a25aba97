"""Every ```python block in docs/ runs, in order, one namespace per page — so the docs cannot drift."""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpkit_search import SemanticUnavailableError

DOCS = Path(__file__).resolve().parents[2] / "docs"
README = DOCS.parent / "README.md"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: A block whose first line is ``# name.py`` is (part of) that file, as a reader would save it.
_FILE_HEADER = re.compile(r"# (\w+)\.py\n")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    source: str


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text()
    return [Block(page, text.count("\n", 0, m.start()) + 2, m.group(1)) for m in _FENCE.finditer(text)]


def files_of(page: Path) -> dict[str, str]:
    """The files a page shows: module name -> source (blocks naming the same file, joined in order)."""
    files: dict[str, str] = {}
    for block in blocks_of(page):
        header = _FILE_HEADER.match(block.source)
        if header is not None:
            files[header.group(1)] = files.get(header.group(1), "") + block.source + "\n\n"
    return files


PAGES = [page for page in [README, *sorted(DOCS.rglob("*.md"))] if blocks_of(page)]


def run_block(block: Block, namespace: dict[str, object]) -> None:
    where = f"{block.page.name}:{block.line}"
    code = compile(block.source, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


def test_the_docs_have_python_examples() -> None:
    assert len(PAGES) >= 3, f"only {len(PAGES)} pages with python blocks under {DOCS}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS.parent)))
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("REMEMBER_STORE", "REMEMBER_SECRET", "HELPDESK_KEYS"):
        monkeypatch.delenv(name, raising=False)
    # The page's files exist as the reader saved them, so `from server import create_server` works.
    for module, source in files_of(page).items():
        (tmp_path / f"{module}.py").write_text(source)
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict[str, object] = {"__name__": "docs_example"}
    skipped = []
    for block in blocks_of(page):
        try:
            run_block(block, namespace)
        except SemanticUnavailableError as exc:
            if os.environ.get("CI") == "true":
                raise  # CI installs the semantic extra (README): its examples must run there
            skipped.append(f"line {block.line}: {exc}")  # the other blocks still run
        except Exception as exc:
            raise AssertionError(f"{page.name}, block at line {block.line} failed: {exc!r}") from exc
    if skipped:
        pytest.skip(f"{page.name}: every other block ran; these need the semantic extra: {'; '.join(skipped)}")
