"""FastMCP 4.2.3 with its per-user state (``UserSession``) and a static bearer token verifier."""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.sessions import UserSession

from bench.tokens import TOKENS

__all__ = ["build"]


def build(options: dict[str, Any]) -> Any:
    verifier = StaticTokenVerifier(
        tokens={token: {"client_id": label, "sub": label, "scopes": []} for label, token in TOKENS.items()}
    )
    server = FastMCP("bench-fastmcp", auth=verifier)

    @server.tool(name="increment", description="Add one to the caller's counter and return it.")
    async def increment(session: UserSession) -> dict[str, int]:
        count = int(await session.get("hits", 0)) + 1
        await session.set("hits", count)
        return {"count": count}

    return server.http_app(path="/mcp")
