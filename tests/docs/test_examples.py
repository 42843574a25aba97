"""Every ```python block in docs/ runs, in order, one namespace per page — so the docs cannot drift."""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import subprocess
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


#: A page whose examples load the local embedding model runs in a child process: once torch is loaded, each full
#: garbage collection of a process takes about 0.25 s, which this process's timing-sensitive tests must not inherit.
_MODEL = "MiniLM("

#: How a child process says that blocks needed the semantic extra, which is not installed.
_SKIPPED_EXIT = 3


def run_page(page: Path) -> list[str]:
    """Run every block of ``page`` in order, in the current directory; the blocks skipped for the semantic extra."""
    for module, source in files_of(page).items():
        Path(f"{module}.py").write_text(source)
        sys.modules.pop(module, None)
    sys.path.insert(0, str(Path.cwd()))
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
    return skipped


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS.parent)))
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("REMEMBER_STORE", "REMEMBER_SECRET", "HELPDESK_KEYS"):
        monkeypatch.delenv(name, raising=False)
    if _MODEL in page.read_text():
        done = subprocess.run(
            [sys.executable, __file__, str(page)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode == _SKIPPED_EXIT:
            pytest.skip(done.stdout.strip())
        assert done.returncode == 0, done.stderr[-3000:]
        return
    monkeypatch.setattr(sys, "path", list(sys.path))  # run_page puts the page's files first on it
    for module in files_of(page):
        monkeypatch.delitem(sys.modules, module, raising=False)
    skipped = run_page(page)
    if skipped:
        pytest.skip(f"{page.name}: every other block ran; these need the semantic extra: {'; '.join(skipped)}")


if __name__ == "__main__":  # python test_examples.py PAGE: one page's blocks, in a process of their own
    sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
    left_out = run_page(Path(sys.argv[1]))
    if left_out:
        print(f"{sys.argv[1]}: every other block ran; these need the semantic extra: {'; '.join(left_out)}")
        sys.exit(_SKIPPED_EXIT)
