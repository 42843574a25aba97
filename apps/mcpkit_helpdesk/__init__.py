"""The help-desk demo: the "Remembering Across Calls" tutorial as an mcpkit server.

Run it with ``python -m mcpkit_helpdesk`` or ``mcpkit run mcpkit_helpdesk:server``; build one in
code (or in tests) with ``create_server()``.
"""

from __future__ import annotations

import os

from mcpkit import Server

from ._apps import HELP_DESK_TOOLS, HELP_DESK_VIEW_TOOLS, assistant_app, help_desk_app
from ._banner import BANNER_VIEW, BannerResource, BannerView, GetBanner, SetBanner
from ._conversations import NOTES_TOKENS, RUNBOOKS, conversations_app
from ._drafts import (
    DRAFT_TTL,
    DRAFT_VIEW,
    SEND_SCOPE,
    DraftResource,
    DraftView,
    GetDraft,
    SaveDraft,
    SendDraft,
    SendReply,
)
from ._identity_provider import (
    DEMO_PASSWORDS,
    IdentityProvider,
    IdentityProviderUnavailable,
    install_identity_provider,
)
from ._keys import DEMO_KEYS, KEYS_VARIABLE, AgentKeys, load_keys, parse_keys
from ._prompts import ReplyToTicket
from ._server import create_oauth_server, create_server
from ._signature import DEFAULT_SIGNATURE, SIGNATURE_EDITOR, DraftReply, GetSignature, SetSignature, SignatureEditor
from ._startup import client_snippet, connect_url, oauth_startup_message, startup_message
from ._tickets import QUEUE, CurrentTicket, NextTicket, WorkOn

__all__ = [
    "BANNER_VIEW",
    "DEFAULT_SIGNATURE",
    "DEMO_KEYS",
    "DEMO_PASSWORDS",
    "DRAFT_TTL",
    "DRAFT_VIEW",
    "HELP_DESK_TOOLS",
    "HELP_DESK_VIEW_TOOLS",
    "KEYS_VARIABLE",
    "NOTES_TOKENS",
    "QUEUE",
    "RUNBOOKS",
    "SEND_SCOPE",
    "SIGNATURE_EDITOR",
    "AgentKeys",
    "BannerResource",
    "BannerView",
    "CurrentTicket",
    "DraftReply",
    "DraftResource",
    "DraftView",
    "GetBanner",
    "GetDraft",
    "GetSignature",
    "IdentityProvider",
    "IdentityProviderUnavailable",
    "NextTicket",
    "ReplyToTicket",
    "SaveDraft",
    "SendDraft",
    "SendReply",
    "SetBanner",
    "SetSignature",
    "SignatureEditor",
    "WorkOn",
    "assistant_app",
    "client_snippet",
    "connect_url",
    "conversations_app",
    "create_oauth_server",
    "create_server",
    "help_desk_app",
    "install_identity_provider",
    "load_keys",
    "oauth_startup_message",
    "parse_keys",
    "server",
    "startup_message",
]


def __getattr__(name: str) -> Server:
    """``mcpkit_helpdesk.server`` (for ``mcpkit run mcpkit_helpdesk:server``), built on first use, not at import.

    It reads ``HELPDESK_KEYS`` and ``REMEMBER_STORE`` then, prints nothing, and opens
    nothing until it serves; importing ``mcpkit_helpdesk`` stays cheap and cannot fail on them.
    """
    if name != "server":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = create_server(os.environ.get("REMEMBER_STORE") or None)
    globals()["server"] = built
    return built
