"""mcpkit_remember: per-caller memory for every tool (``self.remember``)."""

from mcpkit_storage import (
    MODES,
    SCOPES,
    STORE_URLS,
    Explanation,
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
    SearchMode,
    StoreConfig,
    parse_store_url,
)

from ._errors import RememberScopeNotAllowedError
from ._plugin import NOTES_NAMESPACE, RememberPlugin
from ._remember import KeyPage, Remember
from ._tools_config import ToolsConfig

__all__ = [
    "MODES",
    "NOTES_NAMESPACE",
    "SCOPES",
    "STORE_URLS",
    "Explanation",
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
    "SearchMode",
    "StoreConfig",
    "ToolsConfig",
    "parse_store_url",
]
