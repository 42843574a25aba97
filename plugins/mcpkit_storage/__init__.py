"""mcpkit_storage: the one storage layer of mcpkit's plugins (remember, history, context, and the server's tasks).

Values are sealed per owner (AES-256-GCM under keys derived per owner) at hashed addresses, searched through a
blind index, kept in one of five stores, and read and written through a ``Vault`` that handles rotation, replays
and quotas. A plugin that keeps per-caller data subclasses ``BackedPlugin`` and works through a ``Backing``, so
``mcpkit remember purge --user`` and ``rotate`` reach its data too, and one ``REMEMBER_STORE`` and
``REMEMBER_SECRET`` configure every plugin. The errors keep their ``REMEMBER_*`` codes whichever plugin raises them.
"""

from .backing import (
    STORE_URLS,
    TASKS_BUCKET,
    BackedPlugin,
    Backing,
    StoreConfig,
    VaultTaskStore,
    keyring_from,
    make_store,
    parse_store_url,
    store_config,
)
from .base import (
    MAX_KEY_LENGTH,
    MAX_TTL,
    SCOPES,
    KeyedLocks,
    Place,
    RememberConflictError,
    RememberError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberStoreUnavailableError,
    Scope,
    TurnTimeoutError,
    backoff,
    check_key,
    check_scope,
    check_ttl,
    encode_value,
    place_for,
    register_namespace,
    usable,
)
from .index import DEFAULT_MIN_SIMILARITY, Semantic
from .retrieval import MAX_SEARCH_LIMIT, MODES, Explanation, Match, Matches, SearchMode, indexed_count, search
from .sealing import CursorSeal, Keyring
from .stores import INDEX_BYTES_PER_WORD, Quota, QuotaExceededError, StoreUnavailableError
from .vault import Found, Observed, PartialWriteError, Vault, key_hash, read_many_in_thread

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "INDEX_BYTES_PER_WORD",
    "MAX_KEY_LENGTH",
    "MAX_SEARCH_LIMIT",
    "MAX_TTL",
    "MODES",
    "SCOPES",
    "STORE_URLS",
    "TASKS_BUCKET",
    "BackedPlugin",
    "Backing",
    "CursorSeal",
    "Explanation",
    "Found",
    "KeyedLocks",
    "Keyring",
    "Match",
    "Matches",
    "Observed",
    "PartialWriteError",
    "Place",
    "Quota",
    "QuotaExceededError",
    "RememberConflictError",
    "RememberError",
    "RememberIdentityError",
    "RememberInvalidError",
    "RememberQuotaError",
    "RememberStoreUnavailableError",
    "Scope",
    "SearchMode",
    "Semantic",
    "StoreConfig",
    "StoreUnavailableError",
    "TurnTimeoutError",
    "Vault",
    "VaultTaskStore",
    "backoff",
    "check_key",
    "check_scope",
    "check_ttl",
    "encode_value",
    "indexed_count",
    "key_hash",
    "keyring_from",
    "make_store",
    "parse_store_url",
    "place_for",
    "read_many_in_thread",
    "register_namespace",
    "search",
    "store_config",
    "usable",
]
