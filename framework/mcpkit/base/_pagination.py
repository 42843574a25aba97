"""List pagination (``cursor`` / ``nextCursor``) for tools, resources, resource templates and prompts.

What a server lists is fixed when it is built, so a cursor is an offset into that list, written opaquely
(base64url of ``offset:N``). A cursor this server did not give is refused with ``-32602``, as the
specification asks.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

__all__ = ["PAGE_SIZE", "page"]

#: Items per page of every list.
PAGE_SIZE = 100

T = TypeVar("T")


def page(items: Sequence[T], cursor: str | None, what: str) -> tuple[list[T], str | None]:
    """The page of ``items`` that ``cursor`` starts (the first without one) and the cursor of the next, if any."""
    start = 0 if cursor is None else _offset(cursor, len(items), what)
    end = start + PAGE_SIZE
    return list(items[start:end]), (_cursor(end) if end < len(items) else None)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode().rstrip("=")


def _offset(cursor: str, size: int, what: str) -> int:
    number = ""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        label, _, number = text.partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        label, offset = "", -1
    if label != "offset" or not 0 <= offset <= size or not number.isdigit():
        raise MCPError(
            INVALID_PARAMS,
            f"The cursor {cursor[:40]!r} is not one this server gave for {what}; list them again without a cursor.",
        )
    return offset
