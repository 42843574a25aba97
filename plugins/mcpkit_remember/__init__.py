"""mcpkit_remember: per-caller memory for every tool (``self.remember``)."""

from ._config import StoreConfig, ToolsConfig, parse_store_url
from ._errors import (
    RememberConflictError,
    RememberError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberScopeNotAllowedError,
    RememberStoreUnavailableError,
)
from ._plugin import RememberPlugin
from ._remember import Remember
from ._scope import SCOPES, Scope
from ._search import Match, Matches
from ._vault import Found

__all__ = [
    "SCOPES",
    "Found",
    "Match",
    "Matches",
    "Remember",
    "RememberConflictError",
    "RememberError",
    "RememberIdentityError",
    "RememberInvalidError",
    "RememberPlugin",
    "RememberQuotaError",
    "RememberScopeNotAllowedError",
    "RememberStoreUnavailableError",
    "Scope",
    "StoreConfig",
    "ToolsConfig",
    "parse_store_url",
]
