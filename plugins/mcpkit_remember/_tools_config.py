"""``RememberPlugin(tools=...)``: the model-facing memory tools on or off, their scopes (and the one a call without a
scope gets) and their name prefix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit import ConfigurationError, checked_flag
from mcpkit_storage import SCOPES, Scope

__all__ = ["ToolsConfig"]

_TOOLS_KEYS = {
    "enabled",
    "allowed_scopes",
    "allowedScopes",
    "default_scope",
    "defaultScope",
    "prefix",
    "anonymous_writes",
}
#: The scope a call without one gets, when ``default_scope`` is not given: the first of these that is allowed.
_DEFAULT_ORDER: tuple[Scope, ...] = ("session", "user", "tool", "global")


@dataclass(frozen=True, slots=True)
class ToolsConfig:
    """The model-facing memory tools: on or off, which scopes they may use, a name prefix.

    ``default_scope``: the scope of a call that names none; one of ``allowed_scopes``, by default the first allowed of
    session, user, tool and global (so never global while another is allowed).
    ``anonymous_writes``: whether callers who did not sign in may keep (and forget) values through these
    tools; off by default (docs/memory-tools.md says why).
    """

    enabled: bool = False
    allowed_scopes: tuple[Scope, ...] = SCOPES
    prefix: str = ""
    anonymous_writes: bool = False
    default_scope: Scope | None = None

    def __post_init__(self) -> None:
        scopes = self.allowed_scopes
        if isinstance(scopes, str) or not scopes:
            raise ConfigurationError(
                f"tools allowed_scopes is a non-empty list of scopes like ['user'], not {scopes!r}."
            )
        for scope in scopes:
            if scope not in SCOPES:
                raise ConfigurationError(
                    f"tools allowed_scopes has unknown scope {scope!r}; scopes are {list(SCOPES)}."
                )
        checked_flag("tools anonymous_writes", self.anonymous_writes)
        if not isinstance(self.prefix, str) or not all(c.isalnum() or c in "_-." for c in self.prefix):
            raise ConfigurationError(f"tools prefix {self.prefix!r} may hold only letters, digits, '_', '-' and '.'.")
        object.__setattr__(self, "allowed_scopes", tuple(dict.fromkeys(scopes)))
        if self.default_scope is not None and self.default_scope not in self.allowed_scopes:
            raise ConfigurationError(
                f"tools default_scope {self.default_scope!r} is not one of allowed_scopes "
                f"{list(self.allowed_scopes)}: a call without a scope would always be refused. Allow it, or pick "
                "one of those."
            )

    @property
    def default(self) -> Scope:
        """The scope of a call that names none: ``default_scope``, else the first allowed in ``_DEFAULT_ORDER``."""
        if self.default_scope is not None:
            return self.default_scope
        return next(scope for scope in _DEFAULT_ORDER if scope in self.allowed_scopes)

    @classmethod
    def parse(cls, value: ToolsConfig | Mapping[str, Any] | None) -> ToolsConfig:
        if value is None:
            return cls()
        if isinstance(value, ToolsConfig):
            return value
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"tools= takes a dict like {{'enabled': True}} or a ToolsConfig, not {value!r}.")
        unknown = set(value) - _TOOLS_KEYS
        if unknown:
            raise ConfigurationError(
                f"tools= has unknown settings {sorted(unknown)}; the settings are enabled, allowed_scopes, "
                "default_scope, prefix and anonymous_writes."
            )
        scopes: Any = value.get("allowed_scopes", value.get("allowedScopes", SCOPES))
        if not isinstance(scopes, str):
            scopes = tuple(scopes)
        return cls(
            bool(value.get("enabled", False)),
            scopes,
            value.get("prefix", ""),
            value.get("anonymous_writes", False),
            value.get("default_scope", value.get("defaultScope")),
        )
