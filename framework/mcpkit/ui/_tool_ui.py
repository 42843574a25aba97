"""``@tool(ui=Ui(...))`` checked: the view a tool names (a ``ui://`` URI) and who may call it, as ``_meta.ui``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import ConfigurationError
from ..core import Ui

__all__ = ["ToolUi", "checked_tool_ui"]

_VISIBILITY = ("model", "app")


@dataclass(frozen=True, slots=True)
class ToolUi:
    """A tool's view (None: a tool a view calls, shown in none) and visibility, checked; ``meta`` is its ``_meta``."""

    view: str | None
    visibility: tuple[str, ...]

    @property
    def meta(self) -> Mapping[str, Any]:
        shown: dict[str, Any] = {"visibility": list(self.visibility)}
        if self.view is not None:
            shown = {"resourceUri": self.view, **shown}
        return {"ui": shown}


def checked_tool_ui(where: str, ui: object) -> ToolUi | None:
    """``@tool(ui=...)`` as the server keeps it, or a ``ConfigurationError`` naming ``where`` and the bad value."""
    if ui is None:
        return None
    if not isinstance(ui, Ui):
        raise ConfigurationError(f"{where}: ui is an mcpkit.Ui, like Ui(view='ui://helpdesk/draft'), not {ui!r:.60}.")
    if ui.view is not None and (not isinstance(ui.view, str) or not ui.view.startswith("ui://")):
        raise ConfigurationError(
            f"{where}: Ui(view={ui.view!r:.80}) is not a view; a view's URI starts with 'ui://', "
            "like 'ui://helpdesk/draft'."
        )
    visibility = ui.visibility
    if isinstance(visibility, str) or not isinstance(visibility, list | tuple) or not visibility:
        raise ConfigurationError(
            f"{where}: Ui(visibility=...) is a non-empty list of 'model' and 'app', not {visibility!r:.60}."
        )
    unknown = [value for value in visibility if value not in _VISIBILITY]
    if unknown:
        raise ConfigurationError(
            f"{where}: Ui(visibility=...) holds {unknown[0]!r:.40}; use 'model' (offered to the model), "
            "'app' (called by a view), or both."
        )
    if len(set(visibility)) != len(visibility):
        raise ConfigurationError(f"{where}: Ui(visibility={list(visibility)!r}) names a value twice.")
    return ToolUi(ui.view, tuple(value for value in _VISIBILITY if value in visibility))
