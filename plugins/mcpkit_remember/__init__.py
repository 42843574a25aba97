"""mcpkit_remember: per-caller memory for every tool (``self.remember``)."""

from mcpkit_storage import (
    EVENTS,
    MODES,
    SCOPES,
    SOURCES,
    STORE_URLS,
    TRUST,
    Event,
    Explanation,
    Found,
    Match,
    Matches,
    Provenance,
    RememberConflictError,
    RememberError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberStoreUnavailableError,
    Scope,
    SearchMode,
    Source,
    StoreConfig,
    Version,
    parse_store_url,
)

from ._errors import RememberScopeNotAllowedError
from ._plugin import NOTES_NAMESPACE, RememberPlugin
from ._provenance import Info, age_text
from ._remember import KeyPage, Remember
from ._tools_config import ToolsConfig
from ._window import SearchWindow, Since, Until, shown_window

__all__ = [
    "EVENTS",
    "MODES",
    "NOTES_NAMESPACE",
    "SCOPES",
    "SOURCES",
    "STORE_URLS",
    "TRUST",
    "Event",
    "Explanation",
    "Found",
    "Info",
    "KeyPage",
    "Match",
    "Matches",
    "Provenance",
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
    "SearchWindow",
    "Since",
    "Source",
    "StoreConfig",
    "ToolsConfig",
    "Until",
    "Version",
    "age_text",
    "parse_store_url",
    "shown_window",
]
