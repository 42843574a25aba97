"""``Server``: collects the apps (and the mounts of other apps and servers), checks everything when it is built, and
serves them over HTTP or stdio on the MCP SDK's low-level server; and ``Server(middleware=[...])``."""

from ._middleware import MethodCall, MethodRefused, Middleware
from ._mount import Mount, mount
from ._server import Server

__all__ = [
    "MethodCall",
    "MethodRefused",
    "Middleware",
    "Mount",
    "Server",
    "mount",
]
