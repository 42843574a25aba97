"""``mount(app_or_server, prefix=...)``: another app, or another server's apps, served by this server under a prefix.

Inert like the decorators: ``mount`` only records what it was given, and the host ``Server`` checks the prefix and
assembles the mounted apps when it is built (``_assembly``). A mounted tool or prompt is called ``prefix_name``;
everything its own code sees stays as declared (its name, its app id, its resources' URIs, where it keeps data), as
a Starlette app mounted under a path sees its own paths (docs/architecture.md says why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..base import ConfigurationError
from ..core import Plugin, app_options
from ._middleware import Middleware

__all__ = ["Mount", "MountParts", "Mountable", "checked_prefix", "mount"]

#: A prefix: what a tool name may hold, and room left for the name after it.
_PREFIX = re.compile(r"^[A-Za-z0-9.\-]([A-Za-z0-9_.\-]{0,62}[A-Za-z0-9.\-])?$")


@dataclass(frozen=True, slots=True)
class MountParts:
    """What a mount brings into its host: apps (and mounts), the plugins around all of them, their rate limit."""

    apps: tuple[Any, ...]
    plugins: tuple[Plugin, ...] = ()
    rate_limit: object = None
    middleware: tuple[Middleware, ...] = ()
    #: How errors name what was mounted: ``server 'memory'`` or ``app 'notes' (NotesApp)``.
    label: str = ""


@runtime_checkable
class Mountable(Protocol):
    """What ``mount`` takes besides an ``@app`` class: a ``Server``."""

    def mount_parts(self) -> MountParts: ...


@dataclass(frozen=True, slots=True)
class Mount:
    """``mount(...)``'s record, given among a ``Server``'s apps."""

    prefix: object
    parts: MountParts

    def __repr__(self) -> str:
        return f"mount({self.parts.label}, prefix={self.prefix!r})"


def mount(target: type[Any] | Mountable, *, prefix: str) -> Mount:
    """Serve an ``@app`` class, or every app of a ``Server``, inside another server under ``prefix``.

    Put the result among the host's apps: ``Server([HelpDesk, mount(memory_server, prefix="memory")])``. Tools and
    prompts are offered as ``prefix_name``; resources keep their URIs. A mounted server brings its apps, its
    ``plugins`` and its ``rate_limit``; who may call, and everything else about serving, is the host's (docs/tools.md).
    """
    if isinstance(target, Mountable):
        return Mount(prefix, target.mount_parts())
    options = app_options(target) if isinstance(target, type) else None
    if options is None:
        raise TypeError(f"mount() takes an @app class or a mcpkit.Server, not {target!r:.80}")
    return Mount(prefix, MountParts((target,), label=f"app {options.id!r} ({target.__qualname__})"))


def checked_prefix(found: Mount) -> str:
    """The mount's prefix, checked: 1-64 letters, digits, '_', '-' or '.', not ending or starting with '_'."""
    prefix = found.prefix
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise ConfigurationError(
            f"{found!r}: a prefix is 1-64 letters, digits, '_', '-' or '.', neither starting nor ending with '_' "
            f"(tools are then named prefix_name), not {prefix!r:.40}."
        )
    if found.parts.middleware:
        raise ConfigurationError(
            f"{found!r}: that server has middleware=..., which runs around every request a server answers, and so "
            "cannot be kept to the tools it mounts: give the middleware to the host Server(middleware=...)."
        )
    return prefix
