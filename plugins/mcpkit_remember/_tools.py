"""The model-facing memory tools: remember_this, recall, forget, list_memories and search_memories."""

from typing import Annotated, Any, NotRequired, Protocol

from pydantic import Field, WithJsonSchema
from typing_extensions import TypedDict

from mcpkit import ToolContext, iso_time, tool
from mcpkit_search import Embedder
from mcpkit_storage import (
    MAX_KEY_LENGTH,
    MAX_SEARCH_LIMIT,
    SCOPES,
    Match,
    RememberIdentityError,
    Scope,
    usable,
)

from ._errors import RememberScopeNotAllowedError
from ._provenance import age_text
from ._remember import Remember
from ._tools_config import ToolsConfig
from ._window import SearchWindow, Since, Until, shown_window

#: The longest query ``search_memories`` takes, in characters.
MAX_QUERY_CHARS = 1000

__all__ = ["MemoryToolsHost", "memory_tools"]


class MemoryToolsHost(Protocol):
    """What the memory tools use of the plugin that offers them (``RememberPlugin``)."""

    tools_config: ToolsConfig
    embedder: Embedder | None

    def notes_for(self, ctx: ToolContext) -> Remember: ...


#: Any JSON value, as strict clients accept it: one ``anyOf`` branch per JSON type. A schema without ``type``
#: accepts the same values but is refused or warned about ("untyped-schema", the MCP Inspector's ``--strict``), and
#: a ``type`` array is less portable still (clients that map schemas onto one ``type`` per schema, like Gemini's).
_JSON_VALUE_SCHEMA = {"anyOf": [{"type": kind} for kind in ("string", "number", "boolean", "object", "array", "null")]}

#: A value the memory tools keep or return: whatever JSON the caller sent, unchanged.
JsonValue = Annotated[Any, WithJsonSchema(_JSON_VALUE_SCHEMA)]
Value = Annotated[
    JsonValue, Field(description="What to remember: any JSON value (text, a number, true or false, a list, an object).")
]

Key = Annotated[
    str, Field(min_length=1, max_length=MAX_KEY_LENGTH, description="What to call the memory, like 'timezone'.")
]
Ttl = Annotated[float | None, Field(gt=0, description="Forget it after this many seconds; omit to keep it.")]
Pattern = Annotated[str, Field(min_length=1, max_length=MAX_KEY_LENGTH, description="Glob over keys: * any, ? one.")]
Limit = Annotated[int, Field(ge=1, le=200, description="At most this many keys per page.")]
CursorArg = Annotated[str | None, Field(description="nextCursor from the previous page.")]
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="Words to look for in the memories' keys and values. A date or span in it ('in March', "
        "'last week', 'between August 11 and 15') ranks memories of what happened then higher, relative to today; "
        "since and until keep only those.",
    ),
]
SearchLimit = Annotated[int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="At most this many matches.")]

#: What each scope keeps, under MCP 2026-07-28; a description names only the scopes its server allows.
_SCOPE_MEANINGS: dict[Scope, str] = {
    "user": "user keeps it for the signed-in user across sessions, conversations and clients",
    "session": (
        "session keeps it for the signed-in caller across their conversations (on older, session-based "
        "connections, for the session)"
    ),
    "tool": "tool is like session but only these memory tools see it",
    "global": "global is shared with every caller",
}


class Remembered(TypedDict):
    key: str
    scope: str
    remembered: bool


class Recalled(TypedDict):
    key: str
    scope: str
    found: bool
    value: JsonValue


class Forgotten(TypedDict):
    key: str
    scope: str
    forgotten: bool


class Listed(TypedDict):
    scope: str
    keys: list[str]
    nextCursor: str | None


class Found(TypedDict):
    key: str
    value: JsonValue
    score: float
    #: When it was last written, ISO 8601 in UTC (None: written by mcpkit 0.1, which kept no time).
    updated_at: str | None
    #: Where it came from: user, tool, model, import or external (None: not known).
    source: str | None
    #: How long ago it happened, in words ("3 days"; None: not known).
    age: str | None
    #: When what it says happened, ISO 8601 in UTC (by default when it was written; None: not known).
    happened_at: str | None


class Searched(TypedDict):
    scope: str
    results: list[Found]
    #: Why the search went by words alone though this server searches by meaning (its model still loading).
    note: NotRequired[str]
    #: The time window searched (since/until), when there was one: nothing outside it was returned.
    window: NotRequired[SearchWindow]
    #: The time window the query's own dates named ("in March"), when they named one: its memories ranked higher.
    preferred: NotRequired[SearchWindow]


def _anonymous_rule(allowed: tuple[Scope, ...], anonymous_writes: bool) -> str:
    """What an anonymous caller cannot do with the memory tools, naming only the allowed scopes."""
    cannot = ["user scope"] if "user" in allowed else []
    sessioned = [scope for scope in ("session", "tool") if scope in allowed]
    if sessioned:
        cannot.append(f"{' or '.join(sessioned)} scope without a session")
    rule = f"An anonymous caller cannot use {', nor '.join(cannot)}." if cannot else ""
    if not anonymous_writes:
        rule += " Keeping or forgetting values needs a signed-in caller."
    return rule.strip()


def memory_tools(plugin: MemoryToolsHost) -> list[type[ToolContext]]:
    """Build the five tool classes for one plugin (their names carry its prefix, their schemas its scopes)."""
    config = plugin.tools_config
    prefix = config.prefix
    names = {base: prefix + base for base in ("remember_this", "recall", "forget", "list_memories", "search_memories")}
    allowed, default = config.allowed_scopes, config.default
    meanings = "; ".join(_SCOPE_MEANINGS[scope] for scope in allowed)
    scopes_note = f"Scopes under MCP 2026-07-28: {meanings}."
    if len(allowed) < len(SCOPES):
        scopes_note += f" This server allows only: {', '.join(allowed)}."
    scopes_note += f" The scope defaults to {default}."
    anonymous = _anonymous_rule(allowed, config.anonymous_writes)
    # The scope argument lists only the allowed scopes, and defaults to one of them; null means the default too.
    scope_schema = WithJsonSchema(
        {"type": "string", "enum": list(allowed), "description": f"Where to keep it; defaults to {default}."}
    )
    ScopeArg = Annotated[Scope | None, scope_schema]

    def describe(base: str, what: str) -> str:
        see = ", ".join(name for other, name in names.items() if other != base)
        return f"{what} {scopes_note} Related tools: {see}. {anonymous}".rstrip()

    def open_scope(ctx: ToolContext, scope: Scope | None, *, writing: bool = False) -> tuple[Remember, Scope]:
        chosen: Scope = scope or default
        caller = ctx.caller
        if writing and caller.is_anonymous and not config.anonymous_writes:  # whatever the scope: sign in
            reading = " (reading global values needs no sign-in)" if "global" in allowed else ""
            why = f"this server lets only signed-in callers keep or forget values through the memory tools{reading}"
            raise RememberIdentityError(chosen, why, instead=())
        usable_here = [s for s in allowed if usable(s, caller)]  # never suggest a scope that would be refused
        if chosen not in allowed:
            if usable_here:
                raise RememberScopeNotAllowedError(chosen, allowed)
            why = f"the caller is anonymous, and these memory tools allow only {', '.join(allowed)}"
            raise RememberIdentityError(chosen, why, instead=())  # another scope would not help: say what would
        if chosen not in usable_here:
            why = "the caller is anonymous" + ("" if chosen == "user" else " and this request has no session")
            raise RememberIdentityError(chosen, why, instead=usable_here)
        return plugin.notes_for(ctx), chosen

    @tool(
        name=names["remember_this"],
        description=describe("remember_this", f"Remember a value under a key; {names['recall']} reads it back."),
    )
    class RememberThis(ToolContext):
        async def execute(self, key: Key, value: Value, scope: ScopeArg = default, ttl: Ttl = None) -> Remembered:
            remember, chosen = open_scope(self, scope, writing=True)
            await remember.set(key, value, scope=chosen, ttl=ttl)
            return {"key": key, "scope": chosen, "remembered": True}

    @tool(
        name=names["recall"],
        description=describe("recall", f"Recall the value remembered under a key with {names['remember_this']}."),
    )
    class Recall(ToolContext):
        async def execute(self, key: Key, scope: ScopeArg = default) -> Recalled:
            remember, chosen = open_scope(self, scope)
            missing = object()
            value = await remember.get(key, scope=chosen, default=missing)
            if value is missing:
                return {"key": key, "scope": chosen, "found": False, "value": None}
            return {"key": key, "scope": chosen, "found": True, "value": value}

    @tool(name=names["forget"], description=describe("forget", "Forget the value remembered under a key."))
    class Forget(ToolContext):
        async def execute(self, key: Key, scope: ScopeArg = default) -> Forgotten:
            remember, chosen = open_scope(self, scope, writing=True)
            return {"key": key, "scope": chosen, "forgotten": await remember.forget(key, scope=chosen)}

    @tool(
        name=names["list_memories"],
        description=describe("list_memories", "List the keys remembered in a scope, a page at a time."),
    )
    class ListMemories(ToolContext):
        async def execute(
            self, scope: ScopeArg = default, pattern: Pattern = "*", limit: Limit = 50, cursor: CursorArg = None
        ) -> Listed:
            remember, chosen = open_scope(self, scope)
            page = await remember.page(scope=chosen, pattern=pattern, limit=limit, cursor=cursor)
            return {"scope": chosen, "keys": page.keys, "nextCursor": page.next_cursor}

    @tool(
        name=names["search_memories"],
        description=describe(
            "search_memories",
            (
                "Find remembered values by what they mean and say: the closest first, also those in other words; "
                "values unrelated to the query are not returned. Right after the server starts, the search may go "
                "by words only (the result's note then says so)."
                if plugin.embedder is not None
                else "Find remembered values by what they say: the best matches for some words, best first (words "
                "are matched by their stem, so 'preferences' finds 'preferred')."
            )
            + " Each match says its source (user, tool, model, import or external: weigh a fact derived from fetched "
            "content below one the user stated), its age and when it happened. A date in the query ('in March', 'last "
            "week') ranks memories of what happened then higher, whatever their text says (the result's preferred); "
            "since and until (ISO 8601 dates) keep only those (its window). Search before remembering something "
            "new, to update a memory rather than keep a duplicate.",
        ),
    )
    class SearchMemories(ToolContext):
        async def execute(
            self,
            query: Query,
            scope: ScopeArg = default,
            limit: SearchLimit = 10,
            since: Since = None,
            until: Until = None,
        ) -> Searched:
            remember, chosen = open_scope(self, scope)
            matches = await remember.search(query, scope=chosen, limit=limit, since=since, until=until, dates=True)
            now = self.clock.now()
            searched: Searched = {
                "scope": chosen,
                "results": [
                    {
                        "key": m.key,
                        "value": m.value,
                        "score": round(m.score, 4),
                        "updated_at": None if m.updated_at is None else iso_time(m.updated_at),
                        "source": m.source,
                        "age": _age(now, m),
                        "happened_at": _happened(m),
                    }
                    for m in matches
                ],
            }
            if matches.note is not None:
                searched["note"] = matches.note
            window, preferred = shown_window(matches.window), shown_window(matches.preferred)
            if window is not None:
                searched["window"] = window
            if preferred is not None:
                searched["preferred"] = preferred
            return searched

    return [RememberThis, Recall, Forget, ListMemories, SearchMemories]


def _at(match: Match) -> float | None:
    """When what a match says happened (or it was written; None: not known)."""
    return match.updated_at if match.provenance is None else match.provenance.at


def _age(now: float, match: Match) -> str | None:
    """How long ago what a match says happened, in words."""
    at = _at(match)
    return None if at is None else age_text(max(0.0, now - at))


def _happened(match: Match) -> str | None:
    """When what a match says happened, ISO 8601 UTC."""
    at = _at(match)
    return None if at is None else iso_time(at)
