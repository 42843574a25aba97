"""What a log line says about a remembered value that does not open: once per process per store, owner, scope and
reason, naming the scope but never a tool, and what to do."""

from __future__ import annotations

import logging

from ..base import first_time, without_namespace
from ..sealing import UndecryptableError

__all__ = ["scope_of", "warn_unreadable"]

logger = logging.getLogger("mcpkit.remember")


def warn_unreadable(where: str, owner: str, bucket: str, exc: Exception) -> None:
    """Log a value of ``where`` (a store) that does not open, once per process for its owner, scope and reason."""
    reason = exc.reason if isinstance(exc, UndecryptableError) else type(exc).__name__
    if not first_time(("unreadable", where, owner, bucket, reason)):
        return
    logger.warning(
        "a remembered value in %s scope (owner %s…) cannot be read and is treated as missing: %s. "
        "Did REMEMBER_SECRET change? Keep the old secret after the new one (REMEMBER_SECRET=new,old) "
        "until `mcpkit remember rotate` has run.",
        scope_of(bucket),
        owner[:8],
        exc,
    )


def scope_of(bucket: str) -> str:
    """How a log line names a bucket: its scope, never a tool name (``tool.x`` is "tool") nor a namespace."""
    base = without_namespace(bucket)
    return "tool" if base.startswith("tool") else base
