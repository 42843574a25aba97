"""The help desk's first two apps: "help-desk" (the agents' tools) and "assistant" (memory tools)."""

from __future__ import annotations

from typing import Any

from mcpkit import ToolContext, app
from mcpkit_remember import RememberPlugin, StoreConfig

from ._banner import BannerResource, BannerView, GetBanner, SetBanner
from ._drafts import DraftResource, DraftView, GetDraft, SaveDraft, SendDraft, SendReply
from ._prompts import ReplyToTicket
from ._signature import DraftReply, GetSignature, SetSignature, SignatureEditor
from ._tickets import CurrentTicket, NextTicket, WorkOn

__all__ = ["HELP_DESK_TOOLS", "HELP_DESK_VIEW_TOOLS", "assistant_app", "help_desk_app"]

#: Every tool of the "help-desk" app, in the order the tutorial introduces them.
HELP_DESK_TOOLS: tuple[type[ToolContext], ...] = (
    SetSignature,
    DraftReply,
    SetBanner,
    GetBanner,
    WorkOn,
    CurrentTicket,
    NextTicket,
    SaveDraft,
    GetDraft,
    SendReply,
)

#: The tools only the help desk's views call (a host that renders no views is not listed them).
HELP_DESK_VIEW_TOOLS: tuple[type[ToolContext], ...] = (GetSignature, SendDraft)


def _remember(store: StoreConfig, tools: dict[str, Any] | None = None) -> RememberPlugin:
    return RememberPlugin.init(type=store.type, url=store.url, path=store.path, tools=tools)


def help_desk_app(store: StoreConfig) -> type[Any]:
    """The "help-desk" app, remembering in ``store``."""

    @app(
        id="help-desk",
        name="Help Desk",
        tools=(*HELP_DESK_TOOLS, *HELP_DESK_VIEW_TOOLS),
        resources=[BannerResource, DraftResource, SignatureEditor, DraftView, BannerView],
        prompts=[ReplyToTicket],
        plugins=[_remember(store)],
    )
    class HelpDeskApp:
        """Signatures, a banner, tickets and reply drafts for support agents; the banner and drafts as resources,
        a prompt to reply to a ticket, and three views for hosts that render MCP Apps: the draft, the signature editor
        and the banner."""

        __qualname__ = "HelpDeskApp"  # errors name the app, not this factory

    return HelpDeskApp


def assistant_app(store: StoreConfig, memory_prefix: str = "") -> type[Any]:
    """The "assistant" app: no tools of its own, the model-facing memory tools limited to user scope."""
    tools = {"enabled": True, "allowed_scopes": ["user"], "prefix": memory_prefix}

    @app(id="assistant", name="Assistant", plugins=[_remember(store, tools)])
    class AssistantApp:
        """Lets the model keep notes for the signed-in agent (remember_this, recall, forget, list_memories)."""

        __qualname__ = "AssistantApp"

    return AssistantApp
