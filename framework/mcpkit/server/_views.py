"""The MCP Apps views a server's tools name, checked against the views its apps declare, and the extension it
advertises when it has either (docs/apps.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..base import ConfigurationError
from ..tools import ToolSpec
from ..ui import EXTENSION

__all__ = ["checked_views"]


def checked_views(tools: Iterable[ToolSpec], views: frozenset[str]) -> dict[str, dict[str, Any]]:
    """What goes under ``capabilities.extensions`` (nothing without views or tools shown in one); a
    ``ConfigurationError`` naming the tool's class and the URI when a tool names a view no app declares."""
    with_ui = False
    for spec in tools:
        if spec.ui is None:
            continue
        with_ui = True
        if spec.ui.view is not None and spec.ui.view not in views:
            declared = ", ".join(sorted(views)) or "none"
            raise ConfigurationError(
                f"tool class {spec.cls.__module__}.{spec.cls.__qualname__} ({spec.name!r}) names the view "
                f"{spec.ui.view!r}, which no app of this server declares (views declared: {declared}); add a "
                f"@resource(uri={spec.ui.view!r}, ...) class to the app's resources=, or fix the URI."
            )
    return {EXTENSION: {}} if with_ui or views else {}
