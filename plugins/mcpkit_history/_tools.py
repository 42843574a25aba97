"""The model-facing history tools: save_messages, load_history, search_history, list_conversations,
compact_history and clear_history (opt-in: ``HistoryPlugin.init(tools=True)``). Their times are ISO 8601 in UTC
(``iso_time``), as every tool's; ``self.history`` gives seconds since the epoch, for code."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
from pydantic import Field

from mcpkit import ToolContext, iso_time, tool

from ._errors import HistoryInvalidError
from ._messages import MAX_MESSAGES_PER_SAVE, text_of

__all__ = ["history_tools"]

Conversation = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9_.:\-]+$",
        description="The conversation's name: a ticket id, a chat id (letters, digits, '_', '.', ':', '-').",
    ),
]
MessageId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]
Messages = Annotated[
    list[dict[str, Any]],
    Field(
        min_length=1,
        max_length=MAX_MESSAGES_PER_SAVE,
        description=(
            'Messages in order, each {"role": "user"|"assistant"|"system"|"tool", "content": text or parts, "id"?, '
            '"at"?: when it was said, an ISO 8601 time (default: now)}; '
            'parts are {"type": "text", "text"}, {"type": "tool_call", "id", "name", "arguments"} or '
            '{"type": "tool_result", "tool_call_id", "content"}.'
        ),
    ),
]
Limit = Annotated[int, Field(ge=1, le=10_000, description="At most this many messages, the most recent.")]
SearchLimit = Annotated[int, Field(ge=1, le=100, description="At most this many matches.")]
Query = Annotated[str, Field(min_length=1, max_length=1000, description="Words to look for in the messages.")]
Since = Annotated[
    str | None, Field(max_length=40, description="Only messages from this ISO 8601 date or time on, like 2023-03-01.")
]
Until = Annotated[
    str | None,
    Field(max_length=40, description="Only messages before this ISO 8601 time; a date alone includes that day."),
]

_WHOSE = (
    "Conversations belong to the signed-in user: nobody else can read, search or change them, and they survive "
    "restarts of the server and of the agent."
)


def history_tools(prefix: str) -> list[type[ToolContext]]:
    """The six tool classes for one plugin (their names carry its ``prefix``)."""
    names = {
        base: prefix + base
        for base in (
            "save_messages",
            "load_history",
            "search_history",
            "list_conversations",
            "compact_history",
            "clear_history",
        )
    }

    def describe(base: str, what: str) -> str:
        see = ", ".join(name for other, name in names.items() if other != base)
        return f"{what} {_WHOSE} Related tools: {see}."

    @tool(
        name=names["save_messages"],
        description=describe(
            "save_messages",
            "Save messages of a conversation, in order, after parent_id (default: after the last message saved). "
            "Saving after a message that already has a reply starts a branch (a regenerated answer). Returns the "
            "ids. Save each turn as it happens, so a restarted agent gets the conversation back with "
            f"{names['load_history']}.",
        ),
    )
    class SaveMessages(ToolContext):
        async def execute(
            self,
            conversation: Conversation,
            messages: Messages,
            parent_id: MessageId | None = None,
            ttl_seconds: Annotated[float | None, Field(gt=0, description="Keep each message this long.")] = None,
        ) -> dict[str, Any]:
            ids = await self.history.append(conversation, messages, parent_id=parent_id, ttl=ttl_seconds)
            return {"conversation": conversation, "ids": ids, "saved": len(ids)}

    @tool(
        name=names["load_history"],
        description=describe(
            "load_history",
            "Load a conversation: its messages from the first to leaf_id (default: the newest branch's last), "
            "oldest first; a compacted start comes back as one summary message. Call it first after a restart. A "
            "long conversation comes a page at a time, the newest first: pass nextCursor back as cursor for the "
            "messages before (null: none).",
        ),
        read_only=True,
    )
    class LoadHistory(ToolContext):
        async def execute(
            self,
            conversation: Conversation,
            leaf_id: MessageId | None = None,
            limit: Limit | None = None,
            cursor: Annotated[str | None, Field(max_length=1000, description="nextCursor of the page after.")] = None,
        ) -> dict[str, Any]:
            page = await self.history.page(conversation, leaf_id=leaf_id, limit=limit, cursor=cursor)
            leaves = await self.history.leaves(conversation)
            return {
                "conversation": conversation,
                "messages": [_timed(message, "created_at", "at") for message in page.messages],
                "leaves": leaves,
                "nextCursor": page.next_cursor,
            }

    @tool(
        name=names["search_history"],
        description=describe(
            "search_history",
            "Find messages by what they say, best first, across every conversation or in one (words match by "
            "their stem). Each result names its conversation and message id. A date or span in the query ('what "
            "did the user say about the refund last week', 'in March'), or since and until (ISO 8601 dates), keeps "
            "the messages said then (their at), whatever their text.",
        ),
        read_only=True,
    )
    class SearchHistory(ToolContext):
        async def execute(
            self,
            query: Query,
            conversation: Conversation | None = None,
            limit: SearchLimit = 10,
            since: Since = None,
            until: Until = None,
        ) -> dict[str, Any]:
            hits = await self.history.search(
                query, conversation=conversation, limit=limit, since=since, until=until, dates=True
            )
            found: dict[str, Any] = {
                "results": [
                    {
                        "conversation": hit.conversation,
                        "message": _timed(hit.message, "created_at", "at"),
                        "score": round(hit.score, 4),
                    }
                    for hit in hits
                ]
            }
            if hits.note is not None:
                found["note"] = hits.note
            return found

    @tool(
        name=names["list_conversations"],
        description=describe("list_conversations", "List your conversations, most recently changed first."),
        read_only=True,
    )
    class ListConversations(ToolContext):
        async def execute(self) -> dict[str, Any]:
            listed = await self.history.conversations()
            return {"conversations": [_timed(item, "created_at", "updated_at") for item in listed]}

    @tool(
        name=names["compact_history"],
        description=describe(
            "compact_history",
            "Replace the start of a conversation, up to and including through_id, by your summary of it in what "
            f"{names['load_history']} returns. The original messages are kept and stay searchable.",
        ),
    )
    class CompactHistory(ToolContext):
        async def execute(
            self,
            conversation: Conversation,
            through_id: MessageId,
            summary: Annotated[str | None, Field(max_length=65_536)] = None,
        ) -> dict[str, Any]:
            text = summary if summary is not None else await summarised(self, conversation, through_id)
            summary_id = await self.history.compact(conversation, text, through_id)
            return {"conversation": conversation, "summary_id": summary_id, "through_id": through_id}

    @tool(
        name=names["clear_history"],
        description=describe("clear_history", "Delete a conversation and every message in it, for good."),
        destructive=True,
        idempotent=True,
    )
    class ClearHistory(ToolContext):
        async def execute(self, conversation: Conversation) -> dict[str, Any]:
            return {"conversation": conversation, "deleted": await self.history.clear(conversation)}

    return [SaveMessages, LoadHistory, SearchHistory, ListConversations, CompactHistory, ClearHistory]


def _timed(item: dict[str, Any], *names: str) -> dict[str, Any]:
    """``item`` with its times ``names`` (seconds since the epoch, or None) as a model reads them."""
    return {**item, **{name: None if item[name] is None else iso_time(item[name]) for name in names}}


async def summarised(ctx: ToolContext, conversation: str, through_id: str) -> str:
    """A summary written by the client's own model (sampling), when the agent gave none and the client can.

    On 2026-07-28 the question ends this round and the call runs again with the answer: reading the messages
    twice is harmless, and the compaction (the one change) happens after the last question.
    """
    if not ctx.client_can("sampling"):
        raise HistoryInvalidError(
            "Give summary: this client cannot be asked to write one (it does not offer sampling). Summarise the "
            "messages up to through_id yourself and call again with summary set."
        )
    messages = await ctx.history.get(conversation, leaf_id=through_id, compacted=False)
    transcript = "\n".join(f"{m['role']}: {text_of(m['content'])}" for m in messages)
    answer = await ctx.sample(
        "Summarise this conversation so that it can stand in for it: keep names, decisions, facts and open "
        f"questions, in at most 200 words.\n\n{transcript}",
        max_tokens=400,
    )
    if not isinstance(answer.content, types.TextContent) or not answer.content.text.strip():
        raise HistoryInvalidError("The client's model wrote no summary; give summary yourself and call again.")
    return answer.content.text
