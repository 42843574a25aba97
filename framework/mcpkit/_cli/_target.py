"""TARGET, the server a command works on: ``app.py``, ``app.py:name``, ``package.module`` or ``package.module:name``.

Without ``:name`` the module's one ``Server`` is found by itself (or, when it holds none, its one function
annotated ``-> Server``); several, or none, are named in the error with the way to pick one. A module is imported
from ``--app-dir``, else the current folder, else its ``src`` folder when the package is there (a src layout).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

from ..server import Server

__all__ = ["CommandError", "add_target", "is_file_target", "load_server", "module_folder", "split_target"]


class CommandError(Exception):
    """A command was given something it cannot use; printed as one line, without a traceback (exit code 2)."""


def add_target(command: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The TARGET argument, as every command that works on a server takes it."""
    command.add_argument(
        "target",
        metavar="TARGET",
        nargs="?" if optional else None,
        help="app.py, app.py:NAME, package.module or package.module:NAME",
    )
    command.add_argument(
        "--app-dir",
        metavar="DIR",
        help="the folder a module TARGET is imported from (default: the current folder, or its src folder when the "
        "package is there)",
    )


def split_target(target: str) -> tuple[str, str | None]:
    """``(module or file, attribute or None)``; a ``:`` after a Windows drive letter is part of the path."""
    if target.endswith(".py"):
        return target, None
    location, sep, attr = target.rpartition(":")
    if not sep:
        return target, None
    if not location or not attr or (len(location) == 1 and attr[:1] in ("\\", "/")):
        raise CommandError(
            f"TARGET {target!r} must look like app.py, app.py:server, package.module or package.module:server."
        )
    return location, attr


def is_file_target(location: str) -> bool:
    """Whether TARGET's location is a file (``app.py``, ``src/app.py``) rather than a module."""
    return location.endswith(".py") or os.sep in location or "/" in location


def module_folder(location: str, app_dir: str | None) -> Path:
    """The folder a module TARGET is imported from: ``app_dir``; else the current folder, or its ``src`` folder
    when the top package is there and not here (a src layout)."""
    if app_dir is not None:
        folder = Path(app_dir).resolve()
        if not folder.is_dir():
            raise CommandError(f"--app-dir {app_dir}: no such folder.")
        return folder
    here = Path.cwd().resolve()
    top = location.split(".")[0]
    if not _holds(here, top) and _holds(here / "src", top):
        return here / "src"
    return here


def _holds(folder: Path, top: str) -> bool:
    return (folder / top).is_dir() or (folder / f"{top}.py").is_file()


def load_server(target: str, app_dir: str | None = None) -> Server:
    """Import TARGET (a module from ``module_folder``) and return the Server it names or holds (calling a function
    that returns one)."""
    location, attr = split_target(target)
    module = _import(location, app_dir)
    if attr is None:
        return _found_in(module, location)
    try:
        found: Any = getattr(module, attr)
    except AttributeError:
        raise CommandError(f"{location} has no attribute {attr!r}.") from None
    if not isinstance(found, Server) and callable(found):
        found = _called(found, target)
    if not isinstance(found, Server):
        raise CommandError(f"{target} is {type(found).__name__}, not a mcpkit Server (or a function returning one).")
    return found


def _found_in(module: ModuleType, location: str) -> Server:
    servers: dict[int, list[str]] = {}
    for name, value in vars(module).items():
        if isinstance(value, Server) and not name.startswith("_"):
            servers.setdefault(id(value), []).append(name)
    if len(servers) == 1:
        return typing.cast(Server, getattr(module, next(iter(servers.values()))[0]))
    if servers:
        names = sorted(names[0] for names in servers.values())
        raise CommandError(
            f"{location} holds {len(names)} Servers ({', '.join(names)}): name the one to use, "
            f"like {location}:{names[0]}."
        )
    factories = sorted(name for name, value in vars(module).items() if _makes_server(value, module))
    if len(factories) == 1:
        made = _called(getattr(module, factories[0]), f"{location}:{factories[0]}")
        if not isinstance(made, Server):
            raise CommandError(f"{location}:{factories[0]}() returned {type(made).__name__}, not a mcpkit Server.")
        return made
    if factories:
        raise CommandError(
            f"{location} has {len(factories)} functions returning a Server ({', '.join(factories)}): name the one "
            f"to use, like {location}:{factories[0]}."
        )
    raise CommandError(
        f"{location} holds no mcpkit Server at module level (nor a function annotated `-> Server`): create one "
        f"there (server = Server([...])), or name what makes it: {location}:NAME."
    )


def _called(factory: Any, target: str) -> Any:
    """``factory()``, or CommandError when it needs arguments mcpkit cannot know (rather than a TypeError)."""
    try:
        needed = [
            p.name
            for p in inspect.signature(factory).parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
    except (TypeError, ValueError):  # no signature to read (a builtin): call it and let it say
        needed = []
    if needed:
        name = getattr(factory, "__name__", "make")
        raise CommandError(
            f"{target} takes arguments ({', '.join(needed)}), and mcpkit calls it with none: give them defaults, "
            f"name a function that takes none, or create the Server at module level (server = {name}(...)) "
            "and name that."
        )
    return factory()


def _makes_server(value: object, module: ModuleType) -> bool:
    """A function of this module or its package (not one imported from elsewhere) annotated ``-> Server``."""
    if not inspect.isfunction(value) or value.__name__.startswith("_"):
        return False
    if value.__module__ != module.__name__ and not value.__module__.startswith(module.__name__ + "."):
        return False
    try:
        hints = typing.get_type_hints(value)
    except Exception:  # an annotation that does not resolve says nothing about what it returns
        return False
    return hints.get("return") is Server


def _import(location: str, app_dir: str | None) -> ModuleType:
    if is_file_target(location):
        return _import_file(location)
    _put_first(module_folder(location, app_dir))
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        raise CommandError(f"Cannot import module {location!r}: {exc}") from None


def _import_file(location: str) -> ModuleType:
    path = Path(location).resolve()
    if not path.is_file():
        raise CommandError(f"No such file: {location}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise CommandError(f"Cannot import {location}")
    loaded = sys.modules.get(path.stem)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    if loaded is not None:
        raise CommandError(
            f"{location}: a module named {path.stem!r} is already imported; rename the file "
            "(or run it as package.module:attr)."
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    _put_first(path.parent)
    spec.loader.exec_module(module)
    return module


def _put_first(folder: Path) -> None:
    """The user's folder first on sys.path for the user's imports (as ``python app.py`` puts it), once."""
    if str(folder) in sys.path:
        sys.path.remove(str(folder))
    sys.path.insert(0, str(folder))
