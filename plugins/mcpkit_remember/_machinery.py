"""What sibling plugins build on (``mcpkit_history``, ``mcpkit_context``): the one storage stack of mcpkit.

Stores, the keyring, the vault that seals values at hashed addresses, scopes, ranked search and the errors a
client sees: a plugin that keeps per-caller data uses these rather than a second copy, so ``mcpkit remember
purge --user`` and ``rotate`` reach its data too, and one ``REMEMBER_STORE``/``REMEMBER_SECRET`` configures all.
"""

from __future__ import annotations

from ._backing import BackedPlugin, Backing
from ._errors import (
    RememberConflictError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberStoreUnavailableError,
)
from ._scope import Place, Scope, check_scope, place_for
from ._search import MAX_SEARCH_LIMIT, Match, search
from ._store import Quota, QuotaExceededError, StoreUnavailableError
from ._values import check_ttl
from ._vault import Found, Observed, Vault, backoff

__all__ = [
    "MAX_SEARCH_LIMIT",
    "BackedPlugin",
    "Backing",
    "Found",
    "Match",
    "Observed",
    "Place",
    "Quota",
    "QuotaExceededError",
    "RememberConflictError",
    "RememberIdentityError",
    "RememberInvalidError",
    "RememberQuotaError",
    "RememberStoreUnavailableError",
    "Scope",
    "StoreUnavailableError",
    "Vault",
    "backoff",
    "check_scope",
    "check_ttl",
    "place_for",
    "search",
]
