"""Who is calling, over HTTP: static keys, JWTs and introspected tokens, OAuth scopes and protected-resource
metadata, and the gate in front of the MCP app that turns a bearer token into an ``Identity`` or a 401.

``JWTAuth`` (PyJWT with cryptography's X.509 stack, about 60 ms to import) and ``IntrospectionAuth`` (an HTTP
client) are loaded on first use, so a server with static keys alone never pays for them.
"""

from typing import TYPE_CHECKING, Any

from ._gate import AuthGate
from ._oauth_binding import adopt, issuers_of
from ._oauth_scopes import RequiredScopes, checked_scopes, granted_scopes, missing_scopes, refuse_without_scopes
from ._resource_metadata import ResourceMetadata, resource_metadata
from ._static_keys import StaticKeys

if TYPE_CHECKING:
    from ._introspection_auth import IntrospectionAuth
    from ._jwt_auth import JWKSUnavailableError, JWTAuth

__all__ = [
    "AuthGate",
    "IntrospectionAuth",
    "JWKSUnavailableError",
    "JWTAuth",
    "RequiredScopes",
    "ResourceMetadata",
    "StaticKeys",
    "adopt",
    "checked_scopes",
    "granted_scopes",
    "issuers_of",
    "missing_scopes",
    "refuse_without_scopes",
    "resource_metadata",
]


def __getattr__(name: str) -> Any:
    if name in ("JWTAuth", "JWKSUnavailableError"):
        from . import _jwt_auth

        return getattr(_jwt_auth, name)
    if name == "IntrospectionAuth":
        from ._introspection_auth import IntrospectionAuth

        return IntrospectionAuth
    raise AttributeError(f"module 'mcpkit.auth' has no attribute {name!r}")
