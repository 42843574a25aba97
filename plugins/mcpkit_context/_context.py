"""``ContextBlocks``: the ``self.context`` of one call — the server's blocks, with the caller's own writable text
and searchable entries kept sealed in the remember store (user scope by default)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit import Caller, Clock, Context
from mcpkit_storage import (
    MAX_SEARCH_LIMIT,
    Place,
    Quota,
    RememberConflictError,
    Scope,
    Vault,
    backoff,
    indexed_count,
    place_for,
    register_namespace,
    search,
)

from ._blocks import Block, Document, LoadableBlock, ReadOnlyBlock, SearchableBlock, WritableBlock
from ._errors import ContextInvalidError, ContextNotFoundError, ContextOverBudgetError
from ._store_errors import STORE_ERRORS, StorageErrors
from ._tokens import Counter

__all__ = ["ContextBlocks", "ContextPolicy"]

RULE = "═" * 46
_ATTEMPTS = 64
#: Context entries live in buckets of their own; the searchable ones are always indexed for search.
ENTRIES_NAMESPACE = register_namespace("context.", indexed=True)
MAX_ENTRY_BYTES = 16 * 1024


@dataclass(frozen=True, slots=True)
class ContextPolicy:
    vault: Vault
    clock: Callable[[], Clock]
    scope: Scope
    blocks: Mapping[str, Block]
    count: Counter
    session_ttl: float | None = 86_400.0  # a session's blocks live at most this long: nobody reaches them after it


class ContextBlocks:
    __slots__ = ("_ctx", "_policy")

    def __init__(self, policy: ContextPolicy, ctx: Context) -> None:
        self._policy = policy
        self._ctx = ctx

    @property
    def _caller(self) -> Caller:
        return self._ctx.caller

    def _block(self, name: object) -> Block:
        block = self._policy.blocks.get(name) if isinstance(name, str) else None
        if block is None:
            names = ", ".join(self._policy.blocks)
            raise ContextNotFoundError(f"There is no context block {name!r:.60}; the blocks are: {names}.")
        return block

    def _texts(self) -> Place:
        return place_for(self._policy.scope, self._caller, None, "blocks.")

    def _entries(self, block: str) -> Place:
        base = place_for(self._policy.scope, self._caller, None, ENTRIES_NAMESPACE)
        return Place(base.identity, f"{base.bucket}.{block}", base.session)

    # -- what a block holds ------------------------------------------------------------

    async def text(self, name: str) -> str:
        """A read-only or writable block's text (the caller's own for a writable one; empty until written)."""
        block = self._block(name)
        if isinstance(block, ReadOnlyBlock):
            return await block.provider(self._ctx) if block.provider is not None else str(block.content)
        if isinstance(block, WritableBlock):
            with STORE_ERRORS:
                found = await self._policy.vault.read(self._texts(), block.name, self._now())
            return "" if found is None else str(found.value)
        raise ContextInvalidError(f"The block {block.name!r} has no text of its own: {_use(block)}.")

    async def documents(self, name: str) -> Mapping[str, Document]:
        block = self._block(name)
        if not isinstance(block, LoadableBlock):
            raise ContextInvalidError(f"The block {block.name!r} has no documents: {_use(block)}.")
        if block.provider is not None:
            return await block.provider(self._ctx)
        return block.documents or {}

    async def entries(self, name: str) -> int:
        """How many entries the caller keeps in a searchable block."""
        block = self._block(name)
        if not isinstance(block, SearchableBlock):
            raise ContextInvalidError(f"The block {block.name!r} keeps no entries: {_use(block)}.")
        # From the index's statistics: the same cost at 2,000 entries as at one (listing keys opened every entry).
        with STORE_ERRORS:
            return await indexed_count(self._policy.vault, self._entries(block.name), self._now())

    # -- the three tools' work ---------------------------------------------------------

    async def set(
        self, name: str, content: str, *, mode: Literal["replace", "append"] = "replace", key: str | None = None
    ) -> dict[str, Any]:
        """Write a writable block or one entry (``key``) of a searchable block. ``mode="append"`` puts ``content`` on
        a line of its own after the block's text (a line break between them, unless the text ends with one)."""
        block = self._block(name)
        if not isinstance(content, str):
            raise ContextInvalidError(f"content is text, not {content!r:.40}.")
        if isinstance(block, SearchableBlock):
            return await self._set_entry(block, content, key)
        if not isinstance(block, WritableBlock):
            raise ContextInvalidError(f"The block {block.name!r} cannot be written: {_use(block)}.")
        if mode not in ("replace", "append"):
            raise ContextInvalidError(f"mode is 'replace' or 'append', not {mode!r:.40}.")
        if key is not None:
            raise ContextInvalidError(f"The block {block.name!r} is one text: leave key out.")
        vault, place, now = self._policy.vault, self._texts(), self._now()
        for attempt in range(_ATTEMPTS):
            with STORE_ERRORS:
                observed = await vault.observe(place, block.name, now)
                current = "" if observed.found is None else str(observed.found.value)
                text = content if mode == "replace" else _appended(current, content)
                tokens = self._policy.count(text)
                if tokens > block.max_tokens:
                    raise ContextOverBudgetError(block.name, tokens, block.max_tokens, self._policy.count(current))
                deadline = self._deadline(place, now)
                if await vault.swap(place, block.name, observed, json.dumps(text), deadline, now, None):
                    return {
                        "block": block.name,
                        "tokens": tokens,
                        "max_tokens": block.max_tokens,
                        "left": block.max_tokens - tokens,
                    }
            await backoff(attempt)
        raise RememberConflictError(block.name, _ATTEMPTS)

    async def _set_entry(self, block: SearchableBlock, content: str, key: str | None) -> dict[str, Any]:
        if not isinstance(key, str) or not 1 <= len(key) <= 128 or not key.isprintable():
            raise ContextInvalidError(f"The block {block.name!r} keeps entries: give key, 1-128 printable characters.")
        if len(content.encode()) > MAX_ENTRY_BYTES:
            raise ContextInvalidError(f"An entry holds at most {MAX_ENTRY_BYTES:,} bytes; split it into several keys.")
        place, now = self._entries(block.name), self._now()
        limit = Quota(block.max_entries, block.max_bytes)  # exact under concurrent writers: the store checks it
        with StorageErrors(block):
            await self._policy.vault.write(place, key, json.dumps(content), self._deadline(place, now), now, limit)
        return {"block": block.name, "key": key, "entries": await self.entries(block.name)}

    async def search(self, name: str, query: str, *, limit: int = 5) -> list[dict[str, Any]]:
        block = self._block(name)
        if not isinstance(block, SearchableBlock):
            raise ContextInvalidError(f"The block {block.name!r} cannot be searched: {_use(block)}.")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ContextInvalidError(f"limit is a whole number from 1 to {MAX_SEARCH_LIMIT}, not {limit!r:.40}.")
        with STORE_ERRORS:
            matches = await search(self._policy.vault, self._entries(block.name), query, self._now(), limit)
        return [{"key": match.key, "content": match.value, "score": round(match.score, 4)} for match in matches]

    async def load(self, name: str, key: str) -> dict[str, Any]:
        documents = await self.documents(name)
        document = documents.get(key) if isinstance(key, str) else None
        if document is None:
            listed = ", ".join(documents) or "none"
            raise ContextNotFoundError(f"The block {name!r} has no document {key!r:.60}; it has: {listed}.")
        return {
            "block": name,
            "key": key,
            "title": document.title,
            "content": document.content,
            "tokens": self._policy.count(document.content),
        }

    # -- the system prompt -------------------------------------------------------------

    async def render(self) -> str:
        """Every block as the system prompt shows it: each under a rule with its name and description, a writable
        block's usage as ``[45% — 495/1100 tokens]``, a searchable one's entry count, a loadable one's titles."""
        sections = [await self.render_block(name) for name in self._policy.blocks]
        return "\n".join(sections)

    async def render_block(self, name: str) -> str:
        block = self._block(name)
        title = f"{block.name.upper()} ({block.description})"
        if isinstance(block, ReadOnlyBlock):
            return _section(f"{title} [readonly]", await self.text(block.name))
        if isinstance(block, WritableBlock):
            text = await self.text(block.name)
            tokens = self._policy.count(text) if text else 0
            share = round(100 * tokens / block.max_tokens)
            return _section(f"{title} [{share}% — {tokens}/{block.max_tokens} tokens] [writable]", text)
        if isinstance(block, SearchableBlock):
            count = await self.entries(block.name)
            return _section(f"{title} [searchable]", f"{count} entries indexed; search_context finds them.")
        documents = await self.documents(block.name)
        listing = "\n".join(
            f"- {key}: {document.title} — {document.description}" for key, document in documents.items()
        )
        return _section(f"{title} [loadable]", listing or "(no documents)")

    def _now(self) -> float:
        return self._policy.clock().now()

    def _deadline(self, place: Place, now: float) -> float | None:
        """None (kept until changed), except in a session's place: at most ``session_ttl`` from now."""
        cap = self._policy.session_ttl
        return now + cap if place.session and cap is not None else None


def _appended(text: str, line: str) -> str:
    """``line`` added to ``text`` as a line of its own: what a model appending a note expects (notes run together
    otherwise), without a blank line when ``text`` already ends its last line."""
    return f"{text}{line}" if not text or text.endswith("\n") else f"{text}\n{line}"


def _section(heading: str, body: str) -> str:
    return f"{RULE}\n{heading}\n{RULE}\n{body}" if body else f"{RULE}\n{heading}\n{RULE}"


def _use(block: Block) -> str:
    if isinstance(block, ReadOnlyBlock):
        return "it is read-only, shown in the system prompt"
    if isinstance(block, WritableBlock):
        return "it is writable: set_context replaces or appends to its text"
    if isinstance(block, SearchableBlock):
        return "it is searchable: search_context finds its entries, set_context with a key adds one"
    return "it is loadable: load_context returns one of its documents whole"
