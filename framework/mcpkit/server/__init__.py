"""``Server``: collects the apps (and the mounts of other apps and servers), checks everything when it is built, and
serves them over HTTP or stdio on the MCP SDK's low-level server; ``Server(middleware=[...])``; and ``listing``, what
a client is shown."""

from ._listing import LISTED_PROTOCOLS, listing
from ._middleware import MethodCall, MethodRefused, Middleware
from ._mount import Mount, mount
from ._server import Server

__all__ = [
    "LISTED_PROTOCOLS",
    "MethodCall",
    "MethodRefused",
    "Middleware",
    "Mount",
    "Server",
    "listing",
    "mount",
]
