"""mcpkit: MCP tool servers whose tools are classes and remember things per caller."""

from typing import TYPE_CHECKING, Any

from ._caller import Caller
from ._clock import Clock, ManualClock, SystemClock
from ._context import Context, ToolContext
from ._credentials import Authenticator, AuthUnavailableError, Identity, InvalidCredentialError
from ._decorators import app, prompt, resource, tool
from ._elicitation import Elicited
from ._errors import ConfigurationError, StartupError, ToolError
from ._middleware import MethodCall, MethodRefused, Middleware
from ._plugin import Plugin, PluginSetup
from ._prompts import PromptContext
from ._resources import ResourceContext, ResourceNotFoundError
from ._server import Server
from ._static_keys import StaticKeys

__all__ = [
    "AuthUnavailableError",
    "Authenticator",
    "Caller",
    "Clock",
    "ConfigurationError",
    "Context",
    "Elicited",
    "Identity",
    "IntrospectionAuth",
    "InvalidCredentialError",
    "JWKSUnavailableError",
    "JWTAuth",
    "ManualClock",
    "MethodCall",
    "MethodRefused",
    "Middleware",
    "Plugin",
    "PluginSetup",
    "PromptContext",
    "ResourceContext",
    "ResourceNotFoundError",
    "Server",
    "StartupError",
    "StaticKeys",
    "SystemClock",
    "ToolContext",
    "ToolError",
    "app",
    "prompt",
    "resource",
    "tool",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ._introspection_auth import IntrospectionAuth
    from ._jwt_auth import JWKSUnavailableError, JWTAuth


def __getattr__(name: str) -> Any:
    # PyJWT (with cryptography's X.509 stack) takes ~60 ms to import: only servers using JWTs pay it.
    if name in ("JWTAuth", "JWKSUnavailableError"):
        from . import _jwt_auth

        return getattr(_jwt_auth, name)
    if name == "IntrospectionAuth":  # an HTTP client, loaded only by servers that introspect tokens
        from ._introspection_auth import IntrospectionAuth

        return IntrospectionAuth
    raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
