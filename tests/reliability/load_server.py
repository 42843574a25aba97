"""The load test's server: two tools driving ``self.remember``, for static-key, JWT and anonymous callers.

Built with the public API only and configured by the environment, as a deployment would be:
``REMEMBER_STORE`` and ``REMEMBER_SECRET`` (read by ``RememberPlugin``) and ``LOAD_REDIS_PREFIX`` (its Redis
key prefix). Serve it with ``mcpkit run tests/reliability/load_server.py:create_server``.

``mem`` and ``mem_twin`` are the same code under two names, so tool scope can be checked per tool.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from mcpkit import JWTAuth, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

STATIC_CALLERS = 24
JWT_SECRET = "load-test-jwt-secret-0123456789abcdef-0123456789"
REDIS_PREFIX_ENV = "LOAD_REDIS_PREFIX"

#: What ``get`` returns when nothing is stored (so a stored value and a missing one differ).
MISSING = "<missing>"

Op = Literal["set", "get", "increment", "knows", "list", "forget"]
ScopeName = Literal["user", "session", "tool", "global"]


def static_keys() -> dict[str, str]:
    """One key per static-key caller, by label; each key is one caller."""
    return {f"key{i:02d}": f"load-test-key-{i:02d}-0123456789abcdef" for i in range(STATIC_CALLERS)}


class _Mem(ToolContext):
    async def execute(self, op: Op, scope: ScopeName, key: str = "", value: str = "") -> dict[str, Any]:
        remember = self.remember
        if op == "set":
            await remember.set(key, value, scope=scope)
            return {"result": True}
        if op == "get":
            return {"result": await remember.get(key, scope=scope, default=MISSING)}
        if op == "increment":
            return {"result": await remember.increment(key, scope=scope)}
        if op == "knows":
            return {"result": await remember.knows(key, scope=scope)}
        if op == "list":
            return {"result": await remember.list(scope=scope)}
        return {"result": await remember.forget(key, scope=scope)}


@tool(name="mem", description="Load test: one self.remember operation per call.")
class Mem(_Mem):
    pass


@tool(name="mem_twin", description="Load test: the same code as mem under another name.")
class MemTwin(_Mem):
    pass


def create_server() -> Server:
    """The server ``mcpkit run`` serves: store and secret from the environment, anonymous callers allowed."""
    plugin = RememberPlugin.init(redis_prefix=os.environ.get(REDIS_PREFIX_ENV, "mcpkit:remember:"))

    @app(id="load", tools=[Mem, MemTwin], plugins=[plugin])
    class LoadApp: ...

    return Server(
        [LoadApp],
        auth=[StaticKeys(static_keys()), JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")],
        allow_anonymous=True,
        name="load",
    )
