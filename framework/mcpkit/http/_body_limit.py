"""How large an HTTP request body a server accepts: enough for its plugins' largest values, no more.

The SDK accepts 4 MiB by default, and parsing a body that large can hold the event loop for most of a
second (a 3.5 MB body of 330,000 object members took 0.8 s). The default here is sized to the
largest value ``RememberPlugin`` stores by default (64 KiB as compact UTF-8 JSON), sent by a client
that escapes every non-ASCII character (``\\u00e9`` is 6 bytes for 2; at most 3 times the size),
plus room for the request around it. A plugin whose tools take more says so with
``Plugin.max_request_bytes()``; ``max_body_bytes`` sets the limit outright.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import ConfigurationError, checked_whole
from ..core import Plugin

__all__ = ["DEFAULT_MAX_BODY_BYTES", "body_limit"]

#: 64 KiB of value at up to 3 bytes on the wire per byte stored, plus 64 KiB for the rest of the request.
DEFAULT_MAX_BODY_BYTES = 3 * 64 * 1024 + 64 * 1024


def body_limit(max_body_bytes: int | None, plugins: Sequence[Plugin]) -> int:
    """The body limit to serve with: ``max_body_bytes`` if given, else the default or what a plugin needs."""
    needs = [(plugin.max_request_bytes(), plugin) for plugin in plugins]
    if max_body_bytes is None:
        return max([DEFAULT_MAX_BODY_BYTES, *(need for need, _ in needs)])
    checked_whole("max_body_bytes", max_body_bytes, least=1024, unit="bytes")
    for need, plugin in needs:
        if need > max_body_bytes:
            raise ConfigurationError(
                f"max_body_bytes={max_body_bytes:,} is below the {need:,} bytes {plugin.plugin_name} needs for its "
                "largest requests: raise max_body_bytes (or leave it out), or lower the plugin's own limit."
            )
    return max_body_bytes
