"""mcpkit: MCP tool servers whose tools are classes and remember things per caller."""

from ._caller import Caller
from ._clock import Clock, ManualClock, SystemClock
from ._context import ToolContext
from ._credentials import Authenticator, AuthUnavailableError, Identity, InvalidCredentialError
from ._decorators import app, tool
from ._errors import ConfigurationError, ToolError
from ._jwt_auth import JWKSUnavailableError, JWTAuth
from ._plugin import Plugin, PluginSetup
from ._server import Server
from ._static_keys import StaticKeys

__all__ = [
    "AuthUnavailableError",
    "Authenticator",
    "Caller",
    "Clock",
    "ConfigurationError",
    "Identity",
    "InvalidCredentialError",
    "JWKSUnavailableError",
    "JWTAuth",
    "ManualClock",
    "Plugin",
    "PluginSetup",
    "Server",
    "StaticKeys",
    "SystemClock",
    "ToolContext",
    "ToolError",
    "app",
    "tool",
]

__version__ = "0.1.0"
