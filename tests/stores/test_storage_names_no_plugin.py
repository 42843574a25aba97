"""Storage learns the plugins above it by registration (namespaces, stores), never by naming them: no plugin
package, plugin class or plugin namespace appears in ``mcpkit_storage``'s code or messages (issue 37).

What may say "remember" is what outlives the code: the ``Remember*Error`` classes and their ``REMEMBER_*`` codes
(public API), ``REMEMBER_STORE``/``REMEMBER_SECRET`` (documented configuration), the ``mcpkit remember`` commands,
the ``mcpkit.remember`` loggers, and the names stores already hold (``remember_*`` tables, ``mcpkit:remember:``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import mcpkit_storage
from mcpkit_storage.base import register_namespace
from mcpkit_storage.vault._unreadable import scope_of

STORAGE = Path(mcpkit_storage.__file__).parent
SOURCES = sorted(STORAGE.rglob("*.py"))
#: Named nowhere, not even in a comment: storage is below them.
PACKAGES = re.compile(r"mcpkit_(remember|history|context)\b")
#: Named in no code or message (comments and docstrings may say whom a thing is for).
PLUGINS = re.compile(r"\b(Remember|History|Context)Plugin\b")
#: The plugins' bucket namespaces, which they register.
NAMESPACES = ("memory.", "history.", "context.", "conversations.")


def strings_and_names(path: Path) -> list[tuple[int, str]]:
    """Every string literal and name of ``path`` but its docstrings, with its line."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
    return found


def test_storage_has_sources_to_read() -> None:
    assert len(SOURCES) > 40, SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(STORAGE)))
def test_storage_names_no_plugin(path: Path) -> None:
    text = path.read_text()
    wrong = [f"line {line}: {hit[0]}" for line, row in enumerate(text.splitlines(), 1) if (hit := PACKAGES.search(row))]
    wrong += [f"line {line}: {value!r}" for line, value in strings_and_names(path) if PLUGINS.search(value)]
    wrong += [
        f"line {line}: the namespace {value!r}"
        for line, value in strings_and_names(path)
        if value.startswith(NAMESPACES)
    ]
    assert not wrong, f"{path.relative_to(STORAGE)} names a plugin (register it instead):\n" + "\n".join(wrong)


def test_a_registered_namespace_is_indexed_and_named_by_its_scope_in_log_lines() -> None:
    notes = register_namespace("memory.", indexed=True)  # as mcpkit_remember registers it, again: no change

    assert scope_of(notes + "user") == "user"
    assert scope_of(notes + "tool") == "tool"
    assert scope_of("tool.send_reply") == "tool"
    assert scope_of("unregistered.user") == "unregistered.user"
    with pytest.raises(ValueError, match="registered already"):
        register_namespace("memory.", indexed=False)
