"""Who writes a value, as sealed with it: the app and tool, the client's name and version, the session and the era."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, cast

from mcpkit import Context
from mcpkit_storage import origin_bytes

__all__ = ["origin_of"]


def origin_of(ctx: Context) -> Callable[[], bytes]:
    """What works out the sealed origin of what ``ctx``'s call writes (``sealing.origin_bytes``), at its first write.

    It holds the parts of ``ctx`` it reads, not ``ctx``: a call's ``self.remember`` is kept on its context, and a
    context reachable from its own ``remember`` would be a cycle that only the garbage collector frees, made anew by
    every call (the whole call's objects then waited for a collection, which came three times as often).

    The client's name and version are what it said: its ``initialize`` on 2025-11-25 sessions, its request's
    ``_meta`` client info on 2026-07-28 (the SDK builds both into the connection's ``client_params``). The session
    is kept as a hash, never as the id a caller could present.
    """
    caller, request, app_id, name = ctx.caller, ctx.request_context, ctx.app_id, ctx.name

    def origin() -> bytes:
        client = version = None
        params = None if request is None else cast(Any, request).session.client_params
        if params is not None:
            client, version = params.client_info.name, params.client_info.version
        session = caller.session_id
        hashed = None if session is None else hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return origin_bytes(app_id, name, client, version, hashed, caller.protocol_version)

    return origin
