"""The "conversations" app: each ticket's exchange with the customer (``HistoryPlugin``), a ``notes`` block per
agent and the desk's ``runbooks`` (``ContextPlugin``), all on the help desk's store."""

from __future__ import annotations

from typing import Any

from mcpkit import app
from mcpkit_context import ContextPlugin, Document, LoadableBlock, WritableBlock
from mcpkit_history import HistoryPlugin
from mcpkit_remember import StoreConfig

__all__ = ["NOTES_TOKENS", "RUNBOOKS", "conversations_app"]

#: The budget of each agent's notes block.
NOTES_TOKENS = 500

RUNBOOKS = {
    "refunds": Document(
        "Refunds",
        "When and how to refund an order",
        "1. Find the order and check it is under 30 days old.\n"
        "2. Ask for a photo when the item arrived damaged.\n"
        "3. Refund to the original payment method and tell the customer it takes 5 working days.",
    ),
    "outage": Document(
        "Outage",
        "What to tell customers while the service is down",
        "1. Set the banner (set_banner) with what is down and when it should be back.\n"
        "2. Answer each ticket about it with the banner's text and a promise to write again when it is fixed.",
    ),
    "escalation": Document(
        "Escalation",
        "When a ticket goes to the second line",
        "Escalate when the customer asks for a manager, mentions a lawyer, or the fix needs a code change.",
    ),
}


def conversations_app(store: StoreConfig) -> type[Any]:
    """Per-ticket conversations (save_messages, load_history, ...) and the agents' context blocks."""
    history = HistoryPlugin.init(type=store.type, url=store.url, path=store.path, tools=True)
    blocks: list[WritableBlock | LoadableBlock] = [
        WritableBlock("notes", "Your own notes: what you learned about customers and the desk", NOTES_TOKENS),
        LoadableBlock("runbooks", "The desk's procedures; load one before handling such a ticket", RUNBOOKS),
    ]
    context = ContextPlugin.init(blocks, type=store.type, url=store.url, path=store.path)

    @app(id="conversations", name="Ticket conversations", plugins=[history, context])
    class ConversationsApp:
        """Each ticket's exchange with its customer, kept across restarts (the conversation is the ticket id),
        and each agent's notes and the desk's runbooks as context blocks."""

        __qualname__ = "ConversationsApp"

    return ConversationsApp
