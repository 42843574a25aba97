"""The four kinds of context block, declared by the server and checked when it is built (docs/context.md)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit import ConfigurationError, Context, checked_whole

__all__ = [
    "SEARCHABLE_MAX_BYTES",
    "Block",
    "Document",
    "LoadableBlock",
    "ReadOnlyBlock",
    "SearchableBlock",
    "WritableBlock",
    "checked_blocks",
]

_NAME = re.compile(r"^[a-z][a-z0-9_\-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Document:
    """One loadable document: a title and description for the listing, the content for ``load_context``."""

    title: str
    description: str
    content: str


@dataclass(frozen=True, slots=True)
class ReadOnlyBlock:
    """Text from ``content`` or ``async def provider(ctx) -> str``, shown in the system prompt; the agent cannot
    change it."""

    name: str
    description: str
    content: str | None = None
    provider: Callable[[Context], Awaitable[str]] | None = None


@dataclass(frozen=True, slots=True)
class WritableBlock:
    """The caller's own text, at most ``max_tokens``; ``set_context`` replaces or appends to it."""

    name: str
    description: str
    max_tokens: int = 1000


#: What one caller's entries of one searchable block may weigh together, by default (their indexed words count
#: ``INDEX_BYTES_PER_WORD`` each, as in every quota).
SEARCHABLE_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SearchableBlock:
    """The caller's own entries (a key and text each): ``set_context(block, content, key=...)`` adds or replaces one,
    ``search_context`` finds them."""

    name: str
    description: str
    max_entries: int = 10_000
    max_bytes: int = SEARCHABLE_MAX_BYTES


@dataclass(frozen=True, slots=True)
class LoadableBlock:
    """Documents listed by title and description (``documents``, or ``async def provider(ctx) -> mapping``);
    ``load_context`` returns one whole."""

    name: str
    description: str
    documents: Mapping[str, Document] | None = None
    provider: Callable[[Context], Awaitable[Mapping[str, Document]]] | None = None


Block = ReadOnlyBlock | WritableBlock | SearchableBlock | LoadableBlock


def checked_blocks(blocks: object) -> dict[str, Block]:
    """The blocks by name, in order; a ``ConfigurationError`` naming the block for anything wrong."""
    if isinstance(blocks, str | Mapping) or not isinstance(blocks, Sequence) or not blocks:
        raise ConfigurationError("blocks is a non-empty list of ReadOnlyBlock, WritableBlock, SearchableBlock, ...")
    named: dict[str, Block] = {}
    for block in blocks:
        if not isinstance(block, ReadOnlyBlock | WritableBlock | SearchableBlock | LoadableBlock):
            raise ConfigurationError(f"{block!r:.60} is not a context block: use ReadOnlyBlock, WritableBlock, ...")
        where = f"{type(block).__name__}({block.name!r:.40})"
        if not isinstance(block.name, str) or not _NAME.match(block.name):
            raise ConfigurationError(f"{where}: a block name is 1-64 lowercase letters, digits, '_' or '-'.")
        if block.name in named:
            raise ConfigurationError(f"Two context blocks are named {block.name!r}; each needs its own name.")
        if not isinstance(block.description, str) or not block.description.strip():
            raise ConfigurationError(f"{where} has no description: the agent reads it to know what the block is.")
        _check(where, block)
        named[block.name] = block
    return named


def _check(where: str, block: Block) -> None:
    if isinstance(block, ReadOnlyBlock):
        if (block.content is None) == (block.provider is None):
            raise ConfigurationError(f"{where}: give content='...' or provider=async def(ctx) -> str, one of them.")
        _check_provider(where, block.provider)
    elif isinstance(block, WritableBlock):
        checked_whole(f"{where}: max_tokens", block.max_tokens)
    elif isinstance(block, SearchableBlock):
        checked_whole(f"{where}: max_entries", block.max_entries)
        if isinstance(block.max_bytes, bool) or not isinstance(block.max_bytes, int) or block.max_bytes < 64 * 1024:
            raise ConfigurationError(
                f"{where}: max_bytes is a whole number of bytes from 65,536 (room for an entry of 16 KiB and its "
                f"index), not {block.max_bytes!r:.40}."
            )
    else:
        if (block.documents is None) == (block.provider is None):
            raise ConfigurationError(f"{where}: give documents={{key: Document(...)}} or provider=, one of them.")
        _check_provider(where, block.provider)
        for key, document in (block.documents or {}).items():
            if not isinstance(key, str) or not _NAME.match(key) or not isinstance(document, Document):
                raise ConfigurationError(f"{where}: documents maps keys like 'deploy-checklist' to Document(...).")


def _check_provider(where: str, provider: Any) -> None:
    if provider is not None and not inspect.iscoroutinefunction(provider):
        raise ConfigurationError(f"{where}: provider is `async def provider(ctx)`, not {provider!r:.60}.")
