"""mcpkit: ``self.remember.increment("hits", scope="user")``, encryption on, any store, three ways of signing in
(``store="none"``: the same tool with no plugin, counting in the process: the plain call).

``auth``: ``static`` (default; ``StaticKeys`` over the shared bench tokens), ``jwt`` (``JWTAuth`` with an RS256
public key and an explicit audience: a token verified on every call), or ``oauth`` (the same key and the same
tokens, plus what makes the server an OAuth protected resource: ``resource_url``, the audience bound to it, and
a scope the tool requires, checked in the gate and again in the dispatcher), or ``oauth-partial`` (the same with
a second tool needing a scope the tokens lack, so that the gate must read which tool the body names). ``jwt``
against ``oauth`` is the gate's added work for issue 11; ``static`` against ``jwt`` is the cost of verifying.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from typing_extensions import TypedDict

from bench.tokens import LABELS, REMEMBER_SECRET, TOKENS
from mcpkit import JWTAuth, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

__all__ = ["build", "tokens"]

ISSUER = "https://login.bench.example/"
RESOURCE = "http://127.0.0.1:8000/mcp"  # the Host the drivers send
SCOPE = "bench:count"


class CountResult(TypedDict):
    count: int


async def _increment(context: ToolContext) -> CountResult:
    return {"count": int(await context.remember.increment("hits", scope="user"))}


@tool(name="increment", description="Add one to the caller's counter and return it.")
class Increment(ToolContext):
    async def execute(self) -> CountResult:
        return await _increment(self)


@tool(name="increment", description="Add one to the caller's counter and return it.", scopes=[SCOPE])
class ScopedIncrement(ToolContext):
    async def execute(self) -> CountResult:
        return await _increment(self)


@tool(name="reset", description="Set every counter back to zero.", scopes=["bench:admin"])
class Reset(ToolContext):  # never called: with it, no token of the bench grants every scope a tool needs
    async def execute(self) -> CountResult:
        return {"count": 0}


@tool(name="report", description="Build the monthly report (minutes): runs as a task.", task=True)
class Report(ToolContext):  # with options["tasks"]: the server serves the tasks extension; never called here
    async def execute(self) -> CountResult:
        return {"count": 0}


@tool(name="increment", description="Add one to a counter in the process and return it.")
class PlainIncrement(ToolContext):  # options["store"] == "none": no plugin, the plain call
    count = 0

    async def execute(self) -> CountResult:
        PlainIncrement.count += 1
        return {"count": PlainIncrement.count}


@functools.cache
def _signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public_pem() -> bytes:
    return (
        _signing_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def tokens(options: dict[str, Any]) -> dict[str, str]:
    """label -> the bearer token this server accepts for it (JWTs signed in this process for jwt and oauth)."""
    auth = options.get("auth", "static")
    if auth == "static":
        return TOKENS
    # The same claims for both, so that the difference is the server's work, not a longer token's.
    claims = {"iss": ISSUER, "aud": RESOURCE, "scope": f"openid {SCOPE}", "exp": int(time.time()) + 86_400}
    return {label: jwt.encode({**claims, "sub": label}, _signing_key(), algorithm="RS256") for label in LABELS}


def build(options: dict[str, Any]) -> Starlette:
    if options["store"] == "none":  # the no-plugin call (bench.otel_cost): static keys, no store
        return _plain(options)
    plugin = RememberPlugin.init(
        type=options["store"],
        path=options.get("path"),
        url=options.get("url"),
        secret=REMEMBER_SECRET,
        redis_prefix=options.get("prefix") or "mcpkit-bench:",
    )
    auth = options.get("auth", "static")
    tools = {"static": [Increment], "jwt": [Increment], "oauth": [ScopedIncrement]}.get(auth, [ScopedIncrement, Reset])
    if options.get("tasks"):  # the tasks extension on: a task tool beside the plain one (docs/tasks.md)
        tools = [*tools, Report]

    @app(id="bench", tools=tools, plugins=[plugin])
    class BenchApp:
        """The benchmark's one tool."""

    if auth == "static":
        server = Server([BenchApp], auth=StaticKeys(TOKENS), name="bench-mcpkit")
    elif auth == "jwt":
        verifier = JWTAuth(public_key=_public_pem(), algorithms=["RS256"], issuer=ISSUER, audience=RESOURCE)
        server = Server([BenchApp], auth=verifier, name="bench-mcpkit")
    else:
        verifier = JWTAuth(public_key=_public_pem(), algorithms=["RS256"], issuer=ISSUER)
        server = Server([BenchApp], auth=verifier, resource_url=RESOURCE, name="bench-mcpkit")
    if "json_response" in options:  # otherwise mcpkit's own default
        return server.http_app(json_response=bool(options["json_response"]))
    return server.http_app()


def _plain(options: dict[str, Any]) -> Starlette:
    @app(id="bench", tools=[PlainIncrement])
    class PlainApp:
        """The benchmark's one tool, with no plugin."""

    server = Server([PlainApp], auth=StaticKeys(TOKENS), name="bench-mcpkit")
    if "json_response" in options:
        return server.http_app(json_response=bool(options["json_response"]))
    return server.http_app()
