"""The ground floor: errors, clocks, who signed in (``Identity``, the ``Authenticator`` protocol), addresses,
refusal bodies, parameter models, pages, icons, tool results, and the checks of options given as numbers or flags.
Nothing here knows an MCP feature or does I/O."""

from ._addresses import ANONYMOUS_PREFIX, ForwardedClients, caller_key, client_group, connect_host, is_loopback
from ._checks import (
    checked_flag,
    checked_optional_flag,
    checked_optional_seconds,
    checked_optional_whole,
    checked_seconds,
    checked_whole,
)
from ._clock import Clock, ManualClock, SystemClock, iso_time
from ._credentials import (
    IDENTITY_SCOPE_KEY,
    RESERVED_PREFIXES,
    Authenticator,
    AuthUnavailableError,
    Identity,
    InvalidCredentialError,
    issuer_namespace,
)
from ._errors import ConfigurationError, StartupError, ToolError
from ._http_errors import encode, raw_response, rpc_error, send_empty, send_json, send_rpc_error
from ._icons import checked_icons
from ._local import LocalConnection, local_connection
from ._pagination import PAGE_SIZE, page
from ._parameters import method_hints, parameters_model, validation_problems
from ._results import ERROR_META_KEY, error_result

__all__ = [
    "ANONYMOUS_PREFIX",
    "ERROR_META_KEY",
    "IDENTITY_SCOPE_KEY",
    "PAGE_SIZE",
    "RESERVED_PREFIXES",
    "AuthUnavailableError",
    "Authenticator",
    "Clock",
    "ConfigurationError",
    "ForwardedClients",
    "Identity",
    "InvalidCredentialError",
    "LocalConnection",
    "ManualClock",
    "StartupError",
    "SystemClock",
    "ToolError",
    "caller_key",
    "checked_flag",
    "checked_icons",
    "checked_optional_flag",
    "checked_optional_seconds",
    "checked_optional_whole",
    "checked_seconds",
    "checked_whole",
    "client_group",
    "connect_host",
    "encode",
    "error_result",
    "is_loopback",
    "iso_time",
    "issuer_namespace",
    "local_connection",
    "method_hints",
    "page",
    "parameters_model",
    "raw_response",
    "rpc_error",
    "send_empty",
    "send_json",
    "send_rpc_error",
    "validation_problems",
]
