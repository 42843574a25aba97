"""The house stays easy to walk (issue 28): packages by concern in layers, each lower one never importing a higher
one; another package's modules reached only through its face (its ``__init__``); no import circle between modules
anywhere, type-only imports included; no library module over ``MAX_LINES`` lines; and no reaching into another
object's attributes by name in mcpkit (issue 37: a call's state travels in ``CallState``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "framework", ROOT / "plugins", ROOT / "apps")
MAX_LINES = 400

#: The packages inside a distribution's top-level package, lowest first: a package may import only from packages of
#: a lower rank (docs/architecture.md says what each holds). Equal ranks are neighbours that do not know each other.
INNER_RANKS = {
    "mcpkit": {
        "mcpkit.base": 0,
        "mcpkit.auth": 1,
        "mcpkit.telemetry": 1,
        "mcpkit.reporting": 2,
        "mcpkit.elicitation": 2,
        "mcpkit.subscriptions": 3,
        "mcpkit.core": 4,
        "mcpkit.http": 5,
        "mcpkit.completion": 5,
        "mcpkit.ui": 5,
        "mcpkit.tools": 6,
        "mcpkit.resources": 6,
        "mcpkit.prompts": 6,
        "mcpkit.tasks": 7,
        "mcpkit.server": 8,
        "mcpkit": 9,  # the public face and the command line
        "mcpkit.testing": 10,
    },
    "mcpkit_storage": {
        "mcpkit_storage.stores": 0,  # the Store protocol and what every backend shares
        "mcpkit_storage.stores.memory": 1,
        "mcpkit_storage.stores.sqlite": 1,
        "mcpkit_storage.stores.redis": 1,
        "mcpkit_storage.stores.postgres": 1,
        "mcpkit_storage.base": 2,
        "mcpkit_storage.sealing": 3,
        "mcpkit_storage.index": 4,
        "mcpkit_storage.vault": 5,
        "mcpkit_storage.retrieval": 6,
        "mcpkit_storage.backing": 6,
        "mcpkit_storage.admin": 6,
        "mcpkit_storage.portability": 6,
        "mcpkit_storage": 7,  # the public face and the command line
    },
}
#: The top-level packages, lowest first, by the same rule.
TOP_RANKS = {
    "mcpkit_search": 0,
    "mcpkit": 1,
    "mcpkit_storage": 2,
    "mcpkit_remember": 3,
    "mcpkit_history": 3,
    "mcpkit_context": 3,
    "mcpkit_helpdesk": 4,
    "mcpkit_memoryserver": 4,
}


#: Where mcpkit may reach into an object's attributes by name, by the object reached: a ``vars(...)`` call, or a
#: write of a private attribute on anything but ``self`` or ``cls``. Each says why; anything else is coupling the
#: import rules cannot see (per-call state goes in ``core.CallState``, handed to ``Context``).
REACHING_IN = {
    ("mcpkit._cli._target", "module"): "the names a user's module defines, to find its server",
    ("mcpkit.core._plugin", "Plugin"): "the methods Plugin defines: the hooks a plugin class may override",
    ("mcpkit.core._plugin", "klass"): "the methods a plugin class defines, checked against the hooks",
    ("mcpkit.auth._introspection_auth", "copied"): "a copy of self, made by a method of its own class",
    ("mcpkit.auth._introspection_auth", "bound"): "a copy of self, made by a method of its own class",
    ("mcpkit.auth._jwt_auth", "copied"): "a copy of self, made by a method of its own class",
    ("mcpkit.auth._jwt_auth", "bound"): "a copy of self, made by a method of its own class",
    ("mcpkit.http._session_manager", "admitted"): "the SDK's transport takes its event store only when built; the "
    "private attributes relied on are probed when mcpkit.http is imported",
}


def modules() -> Iterator[tuple[str, Path]]:
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            parts = list(path.relative_to(source).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join(parts), path


MODULES = dict(modules())


def package_of(module: str) -> str:
    return module if (MODULES[module].name == "__init__.py") else module.rsplit(".", 1)[0]


def imports(module: str) -> Iterator[tuple[str, int]]:
    """Every project module or package ``module`` imports (at any depth, under TYPE_CHECKING too), with the line."""
    tree = ast.parse(MODULES[module].read_text())
    here = package_of(module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES or alias.name.split(".")[0] in TOP_RANKS:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] not in TOP_RANKS:
                continue
            for alias in node.names:  # `from package import _module` imports the module
                yield (f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target), node.lineno


def layer_of(module: str) -> str:
    """The package ``module`` is judged by: its inner layer, or its top-level package where there are none."""
    top = module.split(".")[0]
    inner = INNER_RANKS.get(top)
    if inner is None:
        return top
    for package in sorted(inner, key=len, reverse=True):
        if module == package or module.startswith(package + "."):
            return package
    raise AssertionError(f"{module} is in no layer of INNER_RANKS[{top!r}]: add its package there")


def below(target: str, module: str) -> bool:
    """Whether ``module`` may import ``target``: the same layer, or a lower one."""
    mine, theirs = layer_of(module), layer_of(target)
    if mine == theirs:
        return True
    top, their_top = module.split(".")[0], target.split(".")[0]
    if top != their_top:
        return TOP_RANKS[their_top] < TOP_RANKS[top]
    ranks = INNER_RANKS[top]
    return ranks[theirs] < ranks[mine]


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)
        assert module.split(".")[0] in TOP_RANKS, f"{module}: add its top-level package to TOP_RANKS"


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = [
        f"{module}:{line} imports {target} ({layer_of(target)} is not below {layer_of(module)})"
        for module in MODULES
        for target, line in imports(module)
        if not below(target, module)
    ]
    assert not wrong, "\n".join(wrong)


def test_another_package_is_reached_only_through_its_face() -> None:
    wrong = []
    for module in MODULES:
        mine = package_of(module)
        for target, line in imports(module):
            if target not in MODULES or MODULES[target].name == "__init__.py":
                continue  # a package's face
            if package_of(target) != mine:
                wrong.append(f"{module}:{line} imports {target}, a module of another package: use its face")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle_anywhere() -> None:
    graph = {module: sorted({target for target, _ in imports(module) if target in MODULES}) for module in MODULES}
    seen: dict[str, int] = {}
    stack: list[str] = []
    circles: list[str] = []

    def visit(module: str) -> None:
        seen[module] = 1
        stack.append(module)
        for target in graph[module]:
            if seen.get(target) == 1:
                circles.append(" -> ".join([*stack[stack.index(target) :], target]))
            elif target not in seen:
                visit(target)
        stack.pop()
        seen[module] = 2

    for module in graph:
        if module not in seen:
            visit(module)
    assert not circles, "\n".join(circles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines: split it by noun (STYLE.md), at most {MAX_LINES}"


def reaching_in(module: str) -> Iterator[tuple[str, int]]:
    """The objects ``module`` reaches into by name (``vars(x)``, ``x._private = ...``), with the line."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
            yield ast.unparse(node.args[0]), node.lineno
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in (part for whole in targets for part in ast.walk(whole)):
            if (
                isinstance(target, ast.Attribute)
                and target.attr.startswith("_")
                and not target.attr.startswith("__")
                and ast.unparse(target.value) not in ("self", "cls")
            ):
                yield ast.unparse(target.value), node.lineno


def test_no_module_of_mcpkit_reaches_into_another_object_by_name() -> None:
    found = {
        (module, what, line)
        for module in MODULES
        if module.split(".")[0] == "mcpkit"
        for what, line in reaching_in(module)
    }
    wrong = [
        f"{module}:{line} reaches into {what} (vars() or a private attribute written): give it an explicit, typed "
        "field or method (a call's state goes in core.CallState), or add it to REACHING_IN with the reason"
        for module, what, line in sorted(found)
        if (module, what) not in REACHING_IN
    ]
    assert not wrong, "\n".join(wrong)
    unused = set(REACHING_IN) - {(module, what) for module, what, _ in found}
    assert not unused, f"REACHING_IN lists what no module does any more: {sorted(unused)}"


def _is_vault(node: ast.expr) -> bool:
    """Whether an expression names a vault (``vault``, ``self._vault``, ``policy.vault``, ...)."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_").endswith("vault")


def vault_insides(tree: ast.AST) -> list[tuple[int, str]]:
    """Where code reaches inside a vault: a private attribute of one, or an assignment to a part of one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and _is_vault(node.value):
            found.append((node.lineno, f"reads the vault's private {node.attr}"))
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for target in targets:
            part = target.value if isinstance(target, ast.Attribute) else None
            while isinstance(part, ast.Attribute | ast.Subscript):
                if _is_vault(part):
                    break
                part = part.value
            if part is not None and _is_vault(part):
                found.append((node.lineno, f"changes {ast.unparse(target)}, a part of a vault, after it was built"))
    return found


def test_a_vault_scan_finds_code_that_reaches_inside_one() -> None:
    source = "vault.index.keys = False\nself._policy.vault._reader.look()\nvault.read(place)\nself._vault = vault\n"
    assert [line for line, _ in vault_insides(ast.parse(source))] == [1, 2]


def test_nothing_outside_the_vault_package_reaches_inside_a_vault() -> None:
    wrong = [
        f"{module}:{line} {what}: ask the Vault with a method (or give it what it needs when it is built)"
        for module, path in MODULES.items()
        if not module.startswith("mcpkit_storage.vault")
        for line, what in vault_insides(ast.parse(path.read_text()))
    ]
    assert not wrong, "\n".join(wrong)
