"""What every part of storage shares: scopes, places and namespaces, key and value checks, the errors, keyed locks,
backoff."""

from ._backoff import backoff
from ._errors import (
    RememberConflictError,
    RememberError,
    RememberIdentityError,
    RememberInvalidError,
    RememberQuotaError,
    RememberStoreUnavailableError,
)
from ._keyed_locks import KeyedLocks, TurnTimeoutError
from ._namespaces import indexed_namespaces, register_namespace, without_namespace
from ._once import first_time
from ._quota_notes import QUOTA_NOTE, record_quotas, recorded_quotas
from ._scope import SCOPES, Place, Scope, check_scope, place_for, usable
from ._values import INTERNAL_KEY, MAX_KEY_LENGTH, MAX_TTL, check_key, check_ttl, encode_value, is_internal_key

__all__ = [
    "INTERNAL_KEY",
    "MAX_KEY_LENGTH",
    "MAX_TTL",
    "QUOTA_NOTE",
    "SCOPES",
    "KeyedLocks",
    "Place",
    "RememberConflictError",
    "RememberError",
    "RememberIdentityError",
    "RememberInvalidError",
    "RememberQuotaError",
    "RememberStoreUnavailableError",
    "Scope",
    "TurnTimeoutError",
    "backoff",
    "check_key",
    "check_scope",
    "check_ttl",
    "encode_value",
    "first_time",
    "indexed_namespaces",
    "is_internal_key",
    "place_for",
    "record_quotas",
    "recorded_quotas",
    "register_namespace",
    "usable",
    "without_namespace",
]
