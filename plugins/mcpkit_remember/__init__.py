"""mcpkit_remember: per-caller memory for every tool (``self.remember``)."""

from mcpkit_storage import (
    SCOPES,
    Found,
    Match,
    Matches,
    RememberConflictError,
    RememberError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberStoreUnavailableError,
    Scope,
    StoreConfig,
    parse_store_url,
)

from ._errors import RememberScopeNotAllowedError
from ._plugin import RememberPlugin
from ._remember import KeyPage, Remember
from ._tools_config import ToolsConfig

__all__ = [
    "SCOPES",
    "Found",
    "KeyPage",
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
