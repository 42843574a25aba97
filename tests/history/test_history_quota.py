"""A save past the history's quota is a ``HistoryQuotaError``: the code clients saw before, a message that names the
history's own limits, and still a ``RememberQuotaError`` for code that catches that."""

from __future__ import annotations

from typing import Any

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_history import HistoryPlugin, HistoryQuotaError
from mcpkit_remember import RememberQuotaError

KEYS = {"nour": "nour-key-0123456789abcdef"}


@tool(name="save_or_say", description="Saves one message, or says which quota refused it.")
class SaveOrSay(ToolContext):
    async def execute(self, conversation: str, text: str) -> dict[str, Any]:
        try:
            await self.history.append(conversation, [{"role": "user", "content": text}])
        except RememberQuotaError as refused:  # what code written before HistoryQuotaError catches
            kind = "history" if isinstance(refused, HistoryQuotaError) else "remember"
            return {"kind": kind, "code": refused.code, "limit": refused.limit, "message": refused.message}
        return {"saved": conversation}


def desk(plugin: HistoryPlugin) -> Server:
    @app(id="desk", tools=[SaveOrSay], plugins=[plugin])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(KEYS))


async def test_a_save_past_max_total_messages_names_that_limit_and_clear_history() -> None:
    async with running(desk(HistoryPlugin.init(type="memory", max_total_messages=2))) as call_as:
        nour = call_as("nour")
        answers = [await nour.call("save_or_say", {"conversation": "T-1", "text": f"note {n}"}) for n in range(3)]

    assert answers[:2] == [{"saved": "T-1"}] * 2
    refused = answers[2]
    assert (refused["kind"], refused["code"], refused["limit"]) == ("history", "REMEMBER_QUOTA_EXCEEDED", "values")
    assert refused["message"] == (
        "Cannot save to the conversation 'T-1': you keep 2 messages or conversations in user scope already, the most "
        "this server allows (max_total_messages). Clear conversations that are no longer needed (clear_history) and "
        "try again, or ask the server's operator to raise the limit."
    )


async def test_a_save_past_max_total_bytes_names_that_limit() -> None:
    plugin = HistoryPlugin.init(type="memory", max_total_bytes=4096, max_message_bytes=4000)
    async with running(desk(plugin)) as call_as:
        nour = call_as("nour")
        kept = await nour.call("save_or_say", {"conversation": "T-1", "text": "short"})
        refused = await nour.call("save_or_say", {"conversation": "T-1", "text": "word " * 700})

    assert kept == {"saved": "T-1"}
    assert (refused["kind"], refused["code"], refused["limit"]) == ("history", "REMEMBER_QUOTA_EXCEEDED", "bytes")
    assert "past 4,096 bytes, the most this server allows (max_total_bytes;" in refused["message"]
