"""The help-desk demo exactly as shipped (memory store), with the benchmark's 64 agents' static keys."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from bench.tokens import TOKENS
from mcpkit_helpdesk import create_server

__all__ = ["build"]


def build(options: dict[str, Any]) -> Starlette:
    return create_server(options.get("store_url") or "memory", TOKENS).http_app()
