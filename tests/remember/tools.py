"""Test-only tools that drive every ``self.remember`` method, with scope and ttl passed as arguments.

Passing ``scope`` as an argument is fine for tests: it picks a scope, never an identity.
``mem`` and ``mem_twin`` are the same code under two names, to show that tool scope keeps
the tools apart.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from mcpkit import ToolContext, app, tool

Op = Literal[
    "set",
    "get",
    "lookup",
    "forget",
    "knows",
    "list",
    "increment",
    "append",
    "forget_all",
    "set_default_scope",
    "search",
    "search_times",
    "search_explained",
    "search_weak",
    "set_many",
    "info",
]

#: What a tool returns from ``get`` when nothing is stored (so "stored None" and "missing" differ).
MISSING = "<missing>"


class _Mem(ToolContext):
    async def execute(
        self,
        op: Op,
        key: Any = None,
        value: Any = None,
        scope: Any = "session",
        ttl: Any = None,
        by: Any = 1,
        pattern: Any = "*",
        item: Any = None,
        query: Any = None,
        limit: Any = 10,
        mode: Any = None,
        weight: Any = None,
        source: Any = None,
        at: Any = None,
    ) -> dict[str, Any]:
        remember = self.remember
        searching = {"mode": mode, **({} if weight is None else {"weight": weight})}
        if op == "set":  # source and at: None is the default (the tool's, and when written)
            await remember.set(key, value, scope=scope, ttl=ttl, source=source, at=at)
            return {"result": True}
        if op == "info":  # [source, at, app, tool], or None
            info = await remember.info(key, scope=scope)
            return {"result": None if info is None else [info.source, info.at, info.app, info.tool]}
        if op == "set_many":  # value: {key: value}
            await remember.set_many(value, scope=scope, ttl=ttl)
            return {"result": True}
        if op == "set_default_scope":  # no scope argument at all: the documented default
            await remember.set(key, value)
            return {"result": await remember.get(key, default=MISSING)}
        if op == "get":
            return {"result": await remember.get(key, scope=scope, default=MISSING)}
        if op == "lookup":  # [value, updated_at, expires_at], or None
            found = await remember.lookup(key, scope=scope)
            return {"result": None if found is None else [found.value, found.updated_at, found.expires_at]}
        if op == "forget":
            return {"result": await remember.forget(key, scope=scope)}
        if op == "knows":
            return {"result": await remember.knows(key, scope=scope)}
        if op == "list":
            return {"result": await remember.list(scope=scope, pattern=pattern)}
        if op == "increment":
            return {"result": await remember.increment(key, by, scope=scope, ttl=ttl)}
        if op == "append":
            appended = await remember.update(key, lambda current: [*current, item], scope=scope, default=[], ttl=ttl)
            return {"result": appended}
        if op == "forget_all":
            return {"result": await remember.forget_all(scope=scope)}
        if op == "search":  # each match as [key, value, score]; a weak one (under min_similarity) left out
            matches = await remember.search(query, scope=scope, limit=limit, **searching)
            return {"result": [[match.key, match.value, match.score] for match in matches if not match.weak]}
        if op == "search_weak":  # each match as [key, weak]
            matches = await remember.search(query, scope=scope, limit=limit, **searching)
            return {"result": [[match.key, match.weak] for match in matches]}
        if op == "search_explained":  # each match as [key, score, its Explanation as a dict]
            matches = await remember.search(query, scope=scope, limit=limit, explain=True, **searching)
            return {"result": [[match.key, match.score, match.why and match.why._asdict()] for match in matches]}
        if op == "search_times":  # each match as [key, updated_at, expires_at]
            matches = await remember.search(query, scope=scope, limit=limit)
            return {"result": [[match.key, match.updated_at, match.expires_at] for match in matches]}
        raise AssertionError(op)


@tool(name="mem", description="Test tool: one self.remember operation per call.")
class Mem(_Mem):
    pass


@tool(name="mem_twin", description="Test tool: the same code as mem under another name.")
class MemTwin(_Mem):
    pass


UNJSONABLE: dict[str, Any] = {
    "nan": math.nan,
    "inf": math.inf,
    "nested_nan": {"score": [1, math.nan]},
    "set": {1, 2, 3},
    "object": object(),
    "bytes": b"raw",
}


@tool(name="set_unjsonable", description="Test tool: stores a value that JSON cannot represent.")
class SetUnjsonable(ToolContext):
    async def execute(self, kind: str, scope: str = "global") -> dict[str, Any]:
        await self.remember.set("weird", UNJSONABLE[kind], scope=scope)
        return {"result": True}


@tool(name="whoami", description="Test tool: who the server thinks is calling.")
class WhoAmI(ToolContext):
    async def execute(self) -> dict[str, Any]:
        return {
            "user_id": self.caller.user_id,
            "session_id": self.caller.session_id,
            "remember_user_id": self.remember.user_id,
        }


@tool(name="ping", description="Test tool: answers without touching self.remember.")
class Ping(ToolContext):
    async def execute(self) -> dict[str, Any]:
        return {"pong": True}


TOOLS = (Mem, MemTwin, SetUnjsonable, WhoAmI, Ping)


def make_app(plugins: list[Any], tools: tuple[type[ToolContext], ...] = TOOLS, app_id: str = "notes") -> type:
    """A fresh ``@app`` class (an app class carries its plugin, so each server config needs its own)."""
    return app(id=app_id, tools=list(tools), plugins=plugins)(type("NotesApp", (), {}))
