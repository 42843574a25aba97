"""What the portability tests share: a server with remember, history and context on one store, what a caller reads
back from it through the real stack, and store handles made as the commands make them."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpkit import ManualClock, Server, StaticKeys, app
from mcpkit.testing import CallAs, running
from mcpkit_context import ContextPlugin, SearchableBlock, WritableBlock
from mcpkit_history import HistoryPlugin
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring, make_store, parse_store_url
from mcpkit_storage.portability import SealingKey, export_memory, import_memory
from mcpkit_storage.stores._store import Store
from remember.support import KEYS, OLD, build_server
from remember.tools import TOOLS

PASSPHRASE = "correct horse battery staple"
BLOCKS = [WritableBlock("notes", "Facts about the customer", max_tokens=200), SearchableBlock("knowledge", "Answers")]
#: Every JSON type, nested, unicode, a large one.
VALUES: dict[str, Any] = {
    "null": None,
    "true": True,
    "false": False,
    "int": -42,
    "big": 2**62,
    "float": 3.14159,
    "text": "Cedar 🌲 été",
    "empty": "",
    "list": [1, "two", [3.0, None], {"four": 4}],
    "object": {"a": {"b": {"c": [True, False]}}, "": "empty key"},
    "large": "kettle warranty " * 12_000,
}
#: When the message of conversation T-9 was said (its own event time, not when it was saved).
SAID_AT = "2023-03-14T09:30:00.000Z"
#: Values written with a source and an event time of their own: (key, value, source, at).
SAID = [("stated", "Allergic to peanuts", "user", 1_600_000_000.0), ("fetched", "Not allergic", "external", 1.65e9)]


def desk(path: Path, secret: str) -> Server:
    """The test tools with remember (searchable), history and context blocks, all on the SQLite file at ``path``."""
    config = {"secret": secret}
    where: dict[str, Any] = {"type": "sqlite", "path": path}

    @app(
        id="desk",
        tools=list(TOOLS),
        plugins=[
            RememberPlugin.init(**where, **config, search=True, max_value_bytes=1_000_000),  # type: ignore[arg-type]
            HistoryPlugin.init(**where, **config, tools=True),  # type: ignore[arg-type]
            ContextPlugin.init(BLOCKS, **where, **config),  # type: ignore[arg-type]
        ],
    )
    class Desk: ...

    return Server([Desk], auth=StaticKeys(KEYS))


async def mem(call_as: CallAs, who: str, op: str, protocol: str | None = None, **arguments: Any) -> Any:
    client = call_as(who) if protocol is None else call_as(who, protocol=protocol)
    return (await client.call("mem", {"op": op, **arguments}))["result"]


async def write_everything(call_as: CallAs) -> None:
    """Values of every JSON type and scope, with and without TTLs; a branched, compacted conversation; context."""
    for name, value in VALUES.items():
        await mem(call_as, "nour", "set", key=name, value=value, scope="user")
    await mem(call_as, "nour", "set", key="soon", value="an hour left", scope="user", ttl=3600)
    for key, value, source, at in SAID:
        await mem(call_as, "nour", "set", key=key, value=value, scope="user", source=source, at=at)
    await mem(call_as, "nour", "set", key="tool note", value={"tool": True}, scope="tool")
    await mem(call_as, "nour", "set", key="k", value="a 2025 session's", scope="session", protocol=OLD, ttl=600)
    await mem(call_as, "nour", "set", key="motd", value="Closed on Friday", scope="global")
    await mem(call_as, "sam", "set", key="kettle", value="Sam's kettle", scope="user")
    nour = call_as("nour")
    said = {"role": "user", "content": "The boiler broke down again.", "at": SAID_AT}  # a message with its own time
    await nour.call("save_messages", {"conversation": "T-9", "messages": [said]})
    turns = [{"role": "user", "content": "Can I get a refund for the kettle?"}, {"role": "assistant", "content": "No."}]
    saved = await nour.call("save_messages", {"conversation": "T-7", "messages": turns})
    question = saved["ids"][0]
    answer = {"role": "assistant", "content": "Yes, within 30 days."}
    await nour.call("save_messages", {"conversation": "T-7", "messages": [answer], "parent_id": question})
    await nour.call("compact_history", {"conversation": "T-7", "through_id": question, "summary": "Kettle refund?"})
    await nour.call("set_context", {"block": "notes", "content": "Prefers email."})
    await nour.call("set_context", {"block": "knowledge", "key": "kettle", "content": "Kettles: 2-year warranty."})


async def read_everything(call_as: CallAs) -> dict[str, Any]:
    """What the callers read back: values with their times, search, conversations, context."""
    nour = call_as("nour")
    seen: dict[str, Any] = {}
    for name in [*VALUES, "soon"]:
        seen[name] = await mem(call_as, "nour", "lookup", key=name, scope="user")
    seen["tool"] = await mem(call_as, "nour", "lookup", key="tool note", scope="tool")
    for name in ["text", *(key for key, *_ in SAID)]:  # [source, at, app, tool]
        seen[f"{name} info"] = await mem(call_as, "nour", "info", key=name, scope="user")
    seen["global"] = await mem(call_as, "sam", "get", key="motd", scope="global")
    seen["sam"] = await mem(call_as, "sam", "get", key="kettle", scope="user")
    seen["search"] = [hit[0] for hit in await mem(call_as, "nour", "search", query="kettle warranty", scope="user")]
    seen["history"] = await nour.call("load_history", {"conversation": "T-7"})
    seen["conversations"] = await nour.call("list_conversations")
    seen["history search"] = await nour.call("search_history", {"query": "refund"})
    seen["said in March"] = await nour.call("search_history", {"query": "what broke down in March 2023?"})
    seen["notes"] = await nour.read("context://notes")
    seen["knowledge"] = await nour.call("search_context", {"block": "knowledge", "query": "kettle"})
    return seen


@asynccontextmanager
async def opened(url: str, prefix: str = "mcpkit:remember:") -> AsyncIterator[Store]:
    """A handle on the store at ``url``, made as the commands make one."""
    store = make_store(parse_store_url(url), prefix)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def exported(store: Store, keyring: Keyring, now: float, **options: Any) -> bytes:
    out = io.BytesIO()
    if "plaintext" not in options:
        options.setdefault("key", SealingKey.passphrase(PASSPHRASE))
    await export_memory(store, keyring, out, now=now, **options)
    return out.getvalue()


async def imported(store: Store, keyring: Keyring, data: bytes, now: float, **options: Any) -> Any:
    if "plaintext" not in options:
        options.setdefault("key", SealingKey.passphrase(PASSPHRASE))
    return await import_memory(store, keyring, io.BytesIO(data), now=now, **options)


async def exported_history(path: Path, secret: str, gap: float) -> tuple[bytes, float]:
    """A plaintext export of nour's ``otp`` (ttl 60 s, ``history=3``), set to "first", then ``gap`` seconds later to
    "second", from a new SQLite store at ``path``; the file and the time it was exported at."""
    clock = ManualClock()
    plugin = RememberPlugin.init(type="sqlite", path=path, secret=secret, history=3)
    async with running(build_server(plugin), clock=clock) as call_as:
        await mem(call_as, "nour", "set", key="otp", value="first", scope="user", ttl=60)
        clock.advance(gap)
        await mem(call_as, "nour", "set", key="otp", value="second", scope="user", ttl=60)
    async with opened(f"sqlite:///{path}") as store:
        return await exported(store, Keyring([secret]), clock.now(), plaintext=True), clock.now()


def served(path: Path, secret: str, clock: ManualClock) -> Any:
    return running(desk(path, secret), clock=clock)
