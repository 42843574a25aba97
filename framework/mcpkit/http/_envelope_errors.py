"""Plain words for the SDK's refusals of a 2026-07-28 request's routing headers and protocol version.

The SDK checks each 2026-07-28 request's ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers against
its body and says "does not match" for a header that is missing as well as for one that differs; and since it
checks the ``_meta`` envelope before the version, a version it does not speak is mostly told about the envelope.
``envelope_error`` is the error sent instead: the same code (``-32022`` with the SDK's ``data`` for a version not
spoken), with a message that names the header, what it and the body say, and what to send.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp_types import HEADER_MISMATCH, INVALID_PARAMS, PROTOCOL_VERSION_META_KEY, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

__all__ = ["envelope_error"]

#: The SDK's messages for a routing header that is missing or differs from the body (``mcp.shared.inbound``).
_VERSION_MISMATCH = f"{MCP_PROTOCOL_VERSION_HEADER} header does not match the request envelope's protocol version"
_METHOD_MISMATCH = f"{MCP_METHOD_HEADER} header does not match the request body's method"
_NAME_MISMATCH = {
    f"{MCP_NAME_HEADER} header does not match the request body's {key!r} parameter": key
    for key in set(NAME_BEARING_METHODS.values())
}
_HEADERS = frozenset({_VERSION_MISMATCH, _METHOD_MISMATCH})
#: The start of the SDK's messages for a missing or incomplete ``params._meta`` envelope.
_ENVELOPE = "params._meta "

#: What the body does not hold.
_ABSENT = object()
#: A body value longer than this is not repeated in a message.
_MAX_SHOWN = 100

_MODERN = MODERN_PROTOCOL_VERSIONS[-1]
_SPOKEN = (
    f"It speaks {_MODERN} (send 'MCP-Protocol-Version: {_MODERN}' and the same version in "
    f"params._meta[{PROTOCOL_VERSION_META_KEY!r}]) and, with an 'initialize' handshake first, "
    f"{', '.join(reversed(HANDSHAKE_PROTOCOL_VERSIONS[1:]))} and {HANDSHAKE_PROTOCOL_VERSIONS[0]}."
)


def envelope_error(headers: Mapping[bytes, str], body: bytes, error: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON-RPC error to send instead of the SDK's ``error`` for a request with ``headers`` and ``body`` (its
    first chunk: the whole body unless it is large), or None for any other error."""
    code, message = error.get("code"), error.get("message")
    if not isinstance(message, str):
        return None
    refused = code == UNSUPPORTED_PROTOCOL_VERSION or (code == INVALID_PARAMS and message.startswith(_ENVELOPE))
    if not refused and (code != HEADER_MISMATCH or (message not in _NAME_MISMATCH and message not in _HEADERS)):
        return None
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER.encode())
    if version is not None and version not in MODERN_PROTOCOL_VERSIONS:  # every 400 it gets comes from that
        data = {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": version}  # the SDK's, for negotiating clients
        return {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": _unsupported(version), "data": data}
    if refused:
        return None  # the envelope's own messages say what is missing
    request = _request(body)
    if message == _VERSION_MISMATCH:
        meta = _field(_field(request, "params"), "_meta")
        envelope = _field(meta, PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else _ABSENT
        said = "has none" if envelope is _ABSENT else f"says {_shown(envelope)}"
        return {
            "code": HEADER_MISMATCH,
            "message": f"The MCP-Protocol-Version header says {_shown(version)} but "
            f"params._meta[{PROTOCOL_VERSION_META_KEY!r}] {said}: send the same version in both.",
        }
    if message == _METHOD_MISMATCH:
        method = _field(request, "method")
        return {"code": HEADER_MISMATCH, "message": _mismatch("Mcp-Method", headers, "the body's method", method)}
    key = _NAME_MISMATCH[message]
    value = _field(_field(request, "params"), key)
    return {"code": HEADER_MISMATCH, "message": _mismatch("Mcp-Name", headers, f"params.{key}", value)}


def _unsupported(version: str) -> str:
    named = "is empty" if not version.strip() else f"names {_shown(version)}"
    return f"This request's MCP-Protocol-Version header {named}, not a protocol version this server speaks. {_SPOKEN}"


def _mismatch(header: str, headers: Mapping[bytes, str], what: str, value: Any) -> str:
    """Say that ``header`` is missing or differs from ``what`` in the body (``value``), and what to send."""
    sent = headers.get(header.lower().encode())
    if sent is None:
        problem = f"This request has no {header} header, which on protocol {_MODERN} repeats {what}"
    else:
        problem = f"The {header} header says {_shown(sent)} but {what} is {_shown(value)}"
    if not isinstance(value, str) or len(value) > _MAX_SHOWN:
        return f"{problem}: send {what} in the {header} header."
    encoded = encode_header_value(value)
    plain = "" if encoded == value else " (base64 in '=?base64?...?=', as a value that is not plain ASCII must be)"
    return f"{problem}: send '{header}: {encoded}'{plain}."


def _request(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # the first chunk of a large body, or not JSON: say less
        return None


def _field(document: Any, name: str) -> Any:
    return document.get(name, _ABSENT) if isinstance(document, dict) else _ABSENT


def _shown(value: Any) -> str:
    """A value from the request, quoted and cut short: the client's own input, never more than a line of it."""
    if value is _ABSENT:
        return "missing"
    text = repr(value) if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"
