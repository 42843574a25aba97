"""mcpkit: MCP tool servers whose tools are classes and remember things per caller."""

from typing import TYPE_CHECKING, Any

from .auth import StaticKeys
from .base import (
    Authenticator,
    AuthUnavailableError,
    Clock,
    ConfigurationError,
    Identity,
    InvalidCredentialError,
    ManualClock,
    StartupError,
    SystemClock,
    ToolError,
    checked_flag,
    checked_optional_seconds,
    checked_optional_whole,
    checked_whole,
    iso_time,
)
from .core import (
    DEFAULT_TURN_TIMEOUT,
    Caller,
    Context,
    Plugin,
    PluginSetup,
    ToolContext,
    Ui,
    UiResource,
    app,
    current_test,
    prompt,
    resource,
    store_under_test,
    tool,
)
from .elicitation import Elicited
from .prompts import PromptContext
from .resources import ResourceContext, ResourceNotFoundError
from .server import MethodCall, MethodRefused, Middleware, Mount, Server, mount
from .subscriptions import SubscriptionLimits
from .tasks import MemoryTaskStore, StoredTask, TaskQuota, TaskQuotaError, TaskStore
from .telemetry import AuditLog, AuditSink, AuditStore, OtlpExport, Telemetry, current_call

__all__ = [
    "DEFAULT_TURN_TIMEOUT",
    "AuditLog",
    "AuditSink",
    "AuditStore",
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
    "MemoryTaskStore",
    "MethodCall",
    "MethodRefused",
    "Middleware",
    "Mount",
    "OtlpExport",
    "Plugin",
    "PluginSetup",
    "PromptContext",
    "ResourceContext",
    "ResourceNotFoundError",
    "Server",
    "StartupError",
    "StaticKeys",
    "StoredTask",
    "SubscriptionLimits",
    "SystemClock",
    "TaskQuota",
    "TaskQuotaError",
    "TaskStore",
    "Telemetry",
    "ToolContext",
    "ToolError",
    "Ui",
    "UiResource",
    "app",
    "checked_flag",
    "checked_optional_seconds",
    "checked_optional_whole",
    "checked_whole",
    "current_call",
    "current_test",
    "iso_time",
    "mount",
    "prompt",
    "resource",
    "store_under_test",
    "tool",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .auth import IntrospectionAuth, JWKSUnavailableError, JWTAuth


def __getattr__(name: str) -> Any:
    # JWTAuth and IntrospectionAuth are loaded on first use (mcpkit.auth says why).
    if name in ("JWTAuth", "JWKSUnavailableError", "IntrospectionAuth"):
        from . import auth

        return getattr(auth, name)
    raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
