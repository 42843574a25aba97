"""The bare SDK: ``MCPServer`` with a ``TokenVerifier`` (auth required) and a dict of counters."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

from bench.tokens import BY_TOKEN

__all__ = ["build"]


class _Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        label = BY_TOKEN.get(token)
        if label is None:
            return None
        return AccessToken(token=token, client_id=label, scopes=[], subject=label)


def build(options: dict[str, Any]) -> Starlette:
    counts: dict[str, int] = {}
    server = MCPServer(
        "bench-sdk",
        token_verifier=_Verifier(),
        auth=AuthSettings(issuer_url="https://auth.bench.invalid", resource_server_url=None),
        log_level="WARNING",
    )

    @server.tool(name="increment", description="Add one to the caller's counter and return it.")
    async def increment() -> dict[str, int]:
        token = get_access_token()
        if token is None or token.subject is None:
            raise PermissionError("no caller")
        count = counts.get(token.subject, 0) + 1
        counts[token.subject] = count
        return {"count": count}

    return server.streamable_http_app(json_response=bool(options.get("json_response", False)))
