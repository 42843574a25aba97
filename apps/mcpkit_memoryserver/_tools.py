"""The five memory tools agents look for (write, read, search, list, delete), on the caller's own memory.

Every tool keeps to user scope: what one signed-in user writes, only that user reads, finds, lists or
deletes, from any client and any session. An anonymous caller is refused (``REMEMBER_IDENTITY_REQUIRED``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import ToolContext, ToolError, iso_time, tool
from mcpkit_remember import RememberInvalidError, SearchWindow, Since, Until, age_text, shown_window

__all__ = ["MEMORY_TOOLS", "MEMORY_TOOL_NAMES", "DeleteMemory", "ListMemoryKeys", "ReadMemory", "SearchMemory"]

#: How agents recognise a memory server's tools (with a server name containing "memory" or "mem").
MEMORY_TOOL_NAMES = ("write_memory", "read_memory", "search_memory", "list_memory_keys", "delete_memory")

_OWN = (
    "Memories belong to the signed-in user: each user reads, finds and changes only their own, from any client "
    "or conversation, and a caller who has not signed in is refused."
)

Key = Annotated[str, Field(min_length=1, max_length=256, description="The memory's name, like 'preferences:replies'.")]
Value = Annotated[str, Field(max_length=60_000, description="What to remember, as text.")]
Ttl = Annotated[
    float | None, Field(gt=0, le=3_155_760_000, description="Forget the memory after this many seconds; omit to keep.")
]
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="Words to look for in keys and values. A date or span in it ('in March', 'last week', 'between "
        "August 11 and 15') ranks memories of what happened then higher, relative to today; since and until keep "
        "only those.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=100, description="At most this many results.")]
PageLimit = Annotated[int, Field(ge=1, le=1000, description="At most this many keys per page.")]
Prefix = Annotated[str, Field(max_length=256, description="Only keys that start with this; omit for all.")]
SourceName = Literal["user", "tool", "model", "import", "external"]
Sources = Annotated[
    list[SourceName] | None,
    Field(
        description="Only memories from these sources (user: the user said it; tool: a tool computed it; model: a "
        "model chose to keep it; import: brought in from a file; external: derived from content fetched from "
        "elsewhere, the least trusted). Omit for all, each marked with its source."
    ),
]
#: A sealed cursor for a 256-character key of 4-byte characters is about 1,600 characters.
Cursor = Annotated[str | None, Field(max_length=2400, description="nextCursor from the previous page.")]


def _when(seconds: float | None) -> str | None:
    """A time as ISO 8601 UTC, like 2026-12-01T09:30:00.000Z (None stays None)."""
    return None if seconds is None else iso_time(seconds)


def _age(now: float, at: float | None) -> str | None:
    """How long ago what a memory says happened (or it was written), in words; None when not known."""
    return None if at is None else age_text(max(0.0, now - at))


def _text(value: Any) -> str:
    """A kept value as text: strings as they are, anything else (kept by another tool) as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class Written(TypedDict):
    key: str
    written: bool


class Read(TypedDict):
    key: str
    found: bool
    value: str | None
    #: When its key was first written (None: not known, or no memory); ``updated_at`` when it was last.
    created_at: str | None
    updated_at: str | None
    expires_at: str | None
    #: Where it came from: user, tool, model, import or external (None: not known, or no memory).
    source: str | None
    #: How long ago it happened, in words ("3 days"); None when not known.
    age: str | None


class Result(TypedDict):
    key: str
    value: str
    score: float
    updated_at: str | None
    source: str | None
    age: str | None
    #: When what it says happened, ISO 8601 UTC (by default when it was written).
    happened_at: str | None


class Results(TypedDict):
    results: list[Result]
    #: Why the search went by words alone though the server searches by meaning (its model still loading).
    note: NotRequired[str]
    #: The time window searched (since/until), when there was one: nothing outside it was returned.
    window: NotRequired[SearchWindow]
    #: The time window the query's own dates named ("in March"), when they named one: its memories ranked higher.
    preferred: NotRequired[SearchWindow]


class Keys(TypedDict):
    keys: list[str]
    nextCursor: str | None


class Deleted(TypedDict):
    key: str
    deleted: bool


@tool(
    name="write_memory",
    description=(
        "Store a memory: text under a key, for later read_memory and search_memory; it is marked as kept by a model "
        "(source: model). Writing a key that exists "
        "overwrites its value (search_memory first, to update a memory rather than keep a duplicate). "
        f"Optional ttl_seconds forgets it after that long. {_OWN}"
    ),
)
class WriteMemory(ToolContext):
    async def execute(self, key: Key, value: Value, ttl_seconds: Ttl = None) -> Written:
        await self.remember.set(key, value, scope="user", ttl=ttl_seconds, source="model")
        return {"key": key, "written": True}


@tool(
    name="read_memory",
    description=(
        "Read the memory stored under a key: its value, when it was first and last written (created_at, "
        "updated_at, ISO 8601 UTC, so you can tell how long it has held and how fresh it is), when it expires "
        "(null: never), its source (user, tool, model, import or external: weigh a fact derived from fetched "
        f"content below one the user stated) and its age. A key with no memory is not an error: found is false. {_OWN}"
    ),
)
class ReadMemory(ToolContext):
    async def execute(self, key: Key) -> Read:
        found = await self.remember.info(key, scope="user")
        if found is None:
            return {
                "key": key,
                "found": False,
                "value": None,
                "created_at": None,
                "updated_at": None,
                "expires_at": None,
                "source": None,
                "age": None,
            }
        return {
            "key": key,
            "found": True,
            "value": _text(found.value),
            "created_at": _when(found.created_at),
            "updated_at": _when(found.updated_at),
            "expires_at": _when(found.expires_at),
            "source": found.source,
            "age": _age(self.clock.now(), found.at or found.updated_at),
        }


@tool(
    name="search_memory",
    description=(
        "Search memories by content: the best matches for some words among keys and values, best first, each "
        "with a score (higher is better), its source (user, tool, model, import or external) and its age: weigh "
        "a fact derived from fetched content (external) below one the user stated. Words match by their stem "
        "('preferences' finds 'preferred'), "
        "ignoring case and accents; a server that also searches by meaning finds memories in other words too "
        "(right after it starts it may search by words only, and the result's note says so). Memories unrelated "
        f"to the query are not returned; sources keeps only memories from those sources. A date in the query ('what "
        "did the user say about X in March', 'last week') ranks memories of what happened then (happened_at) "
        "higher, whatever their text says (the result's preferred shows the window); since and until (ISO 8601 "
        f"dates) keep only those (the result's window). {_OWN}"
    ),
)
class SearchMemory(ToolContext):
    async def execute(
        self, query: Query, limit: Limit = 10, sources: Sources = None, since: Since = None, until: Until = None
    ) -> Results:
        matches = await self.remember.search(
            query, scope="user", limit=limit, sources=sources, since=since, until=until, dates=True
        )
        now = self.clock.now()
        results: Results = {"results": []}
        for match in matches:
            at = match.updated_at if match.provenance is None else match.provenance.at
            results["results"].append(
                {
                    "key": match.key,
                    "value": _text(match.value),
                    "score": round(match.score, 4),
                    "updated_at": _when(match.updated_at),
                    "source": match.source,
                    "age": _age(now, at),
                    "happened_at": _when(at),
                }
            )
        if matches.note is not None:
            results["note"] = matches.note
        window, preferred = shown_window(matches.window), shown_window(matches.preferred)
        if window is not None:
            results["window"] = window
        if preferred is not None:
            results["preferred"] = preferred
        return results


@tool(
    name="list_memory_keys",
    description=(
        "List the keys of stored memories, sorted, a page at a time; prefix keeps only keys that start with it. "
        f"Pass nextCursor back as cursor for the next page (null: no more). {_OWN}"
    ),
)
class ListMemoryKeys(ToolContext):
    async def execute(self, prefix: Prefix = "", limit: PageLimit = 100, cursor: Cursor = None) -> Keys:
        try:
            page = await self.remember.page(scope="user", prefix=prefix, limit=limit, cursor=cursor)
        except RememberInvalidError as exc:  # only the cursor can be wrong here: the rest is checked by its schema
            raise ToolError(
                f"cursor is not a nextCursor that list_memory_keys gave this user ({exc.message}); call again "
                "without a cursor to start over.",
                code="INVALID_CURSOR",
            ) from None
        return {"keys": page.keys, "nextCursor": page.next_cursor}


@tool(
    name="delete_memory",
    description=(
        "Delete the memory stored under a key. Deleting a key with no memory is not an error (deleted is "
        f"false), so it is safe to repeat. {_OWN}"
    ),
)
class DeleteMemory(ToolContext):
    async def execute(self, key: Key) -> Deleted:
        return {"key": key, "deleted": await self.remember.forget(key, scope="user")}


MEMORY_TOOLS = (WriteMemory, ReadMemory, SearchMemory, ListMemoryKeys, DeleteMemory)
