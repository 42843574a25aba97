"""``History``: the ``self.history`` of one call — the caller's conversations, kept durable, sealed and searchable
(their layout and order of writes: docs/architecture.md)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from mcpkit import Caller
from mcpkit_search import when
from mcpkit_storage import (
    MAX_SEARCH_LIMIT,
    Kept,
    Observed,
    Place,
    RememberConflictError,
    RememberInvalidError,
    Window,
    backoff,
    check_ttl,
    origin_bytes,
    place_for,
    register_namespace,
    seal_meta,
)

from ._errors import HistoryInvalidError, HistoryNotFoundError
from ._messages import Hit, check_conversation, check_id, checked_messages, event_time, message_of, stored
from ._pages import HistoryPage, older_than, opened_cursor, path_ids, read_newest
from ._policy import HistoryPolicy, turn
from ._saving import create, resent
from ._search import Hits, search_all, search_one
from ._store_errors import STORE_ERRORS, StorageErrors
from ._tree import Tree, chained, grown, listing

__all__ = ["History", "HistoryPage", "Hit", "Hits"]

logger = logging.getLogger("mcpkit.history")

#: Conversations' trees and their messages live in buckets of their own; messages are always indexed for search.
TREES_NAMESPACE = register_namespace("conversations.")
MESSAGES_NAMESPACE = register_namespace("history.", indexed=True)

#: Who a message with its own event time was written by, as its sealed provenance says (the app's code saved it).
_ORIGIN = origin_bytes(None, None, None, None, None, None)

#: Compare-and-set attempts on a conversation's tree; only concurrent saves to the same conversation retry.
_TREE_ATTEMPTS = 64

#: How long the empty tree a cleared conversation leaves is kept (it holds no message; any save replaces it). It
#: only has to outlast the compare-and-set retries of a save racing the clear (64 at most 50 ms apart), and it
#: counts against the caller's quota of conversations while it lasts (``HistoryPolicy.tree_quota``).
CLEARED_SECONDS = 60.0


class _NothingToClear(Exception):
    """``clear`` found no conversation, or an empty one."""


class History:
    """The caller's conversations. Ids of messages are the server's (or the caller's own, checked)."""

    __slots__ = ("_caller", "_policy")

    def __init__(self, policy: HistoryPolicy, caller: Caller) -> None:
        self._policy = policy
        self._caller = caller

    def _places(self) -> tuple[Place, Place]:
        """Where the caller's trees and messages live (REMEMBER_IDENTITY_REQUIRED without the scope's identity)."""
        trees = place_for(self._policy.scope, self._caller, None, TREES_NAMESPACE)
        messages = Place(trees.identity, MESSAGES_NAMESPACE + trees.bucket.removeprefix(TREES_NAMESPACE), trees.session)
        return trees, messages

    # -- writing ---------------------------------------------------------------------

    async def append(
        self,
        conversation: str,
        messages: Sequence[dict[str, Any]],
        *,
        parent_id: str | None = None,
        ttl: float | None = None,
        at: float | datetime | str | None = None,
    ) -> list[str]:
        """Save ``messages`` in order after ``parent_id`` (default: the newest leaf); their ids.

        Saving after a message that already has children starts a branch. ``ttl``: each message of the
        conversation is kept that many seconds after it is saved (from now on; None keeps what was set). ``at``:
        when the messages were said (seconds since the epoch, a datetime or an ISO 8601 text), for those that do
        not carry their own ``at``; default: when they are saved. A search's window keeps messages by it.
        """
        conversation = check_conversation(conversation)
        checked = checked_messages(messages, self._policy.max_message_bytes, event_time(at, "append(at=...)"))
        if parent_id is not None:
            parent_id = check_id(parent_id, "parent_id")
        try:
            seconds = check_ttl(ttl)
        except RememberInvalidError as exc:
            raise HistoryInvalidError(exc.message.replace("ttl ", "ttl_seconds ", 1)) from None
        trees, place = self._places()
        vault = self._policy.vault
        now = self._policy.clock().now()
        written: list[str] = []
        with StorageErrors(conversation, self._policy.scope):
            try:
                seen = await vault.observe(trees, conversation, now)  # also the first compare-and-set's expectation
                tree = None if seen.found is None else Tree.load(seen.found.value)
                if tree is not None and await resent(self._policy.vault, place, conversation, tree, checked, now):
                    return [message["id"] for message in checked]  # this save landed already: it is not made twice
                chain = chained(conversation, tree, checked, parent_id, self._policy.max_messages)
                keep = seconds if seconds is not None else (tree.ttl if tree is not None else None)
                expires_at = self._deadline(trees, now, keep)
                for message in chain:
                    key = f"{conversation}/{message['id']}"
                    value = _json(stored(message))  # its parent: the tree
                    meta = b"" if message["at"] is None else seal_meta("tool", message["at"], _ORIGIN)
                    if message["given"]:  # an id of the caller's: never write over a message already kept under it
                        where = (place, key, conversation, message["id"])
                        if not await create(vault, self._policy.quota, where, value, expires_at, now, meta):
                            continue  # this very message, sent again
                    else:
                        await vault.write(place, key, value, expires_at, now, self._policy.quota, meta=meta)
                    written.append(key)

                def grow(current: Tree | None) -> Tree:
                    return grown(conversation, current, chain, parent_id, now, seconds, expires_at)

                await self._change_tree(trees, conversation, now, grow, seen=seen)
            except BaseException:
                await self._discard(place, written, now)  # a save that did not land leaves nothing behind
                raise
        return [message["id"] for message in chain]

    async def _discard(self, place: Place, keys: list[str], now: float) -> None:
        if not keys:
            return
        try:
            await self._policy.vault.delete_many(place, keys, now)
        except Exception:  # the store is down: such messages are never shown, and purge removes them
            logger.warning("could not remove %d message(s) of a save that failed", len(keys), exc_info=True)

    def _deadline(self, trees: Place, now: float, keep: float | None) -> float | None:
        """When a message saved now expires: ``keep`` seconds from now, and a session's within ``session_ttl``."""
        deadline = None if keep is None else now + keep
        cap = self._policy.session_ttl
        if trees.session and cap is not None:
            deadline = now + cap if deadline is None else min(deadline, now + cap)
        return deadline

    async def compact(self, conversation: str, summary: str, through_id: str) -> str:
        """Let ``summary`` stand for the path from the root to ``through_id`` in what ``get`` returns; its id.

        The messages it replaces are kept: still searchable, and ``get(..., compacted=False)`` returns them.
        """
        conversation = check_conversation(conversation)
        through_id = check_id(through_id, "through_id")
        if not isinstance(summary, str) or not summary.strip():
            raise HistoryInvalidError("summary is the text that stands for the earlier messages; it cannot be empty.")
        summary_message = checked_messages([{"role": "system", "content": summary}], self._policy.max_message_bytes)
        trees, place = self._places()
        now = self._policy.clock().now()
        with StorageErrors(conversation, self._policy.scope):
            tree = await self._tree(trees, conversation, now)
            if tree is None or through_id not in tree.parents():
                raise HistoryNotFoundError(conversation, through_id)
            summary_id: str = summary_message[0]["id"]
            expires_at = self._deadline(trees, now, tree.ttl)
            value = {"role": "system", "content": summary, "summary_of": through_id}
            await self._policy.vault.write(
                place, f"{conversation}/{summary_id}", _json(value), expires_at, now, self._policy.quota
            )

            def compacted(tree: Tree | None) -> Tree:
                if tree is None or through_id not in tree.parents():
                    raise HistoryNotFoundError(conversation, through_id)
                tree.holds(expires_at)
                tree.compactions.append((summary_id, through_id))
                tree.updated_at = now
                return tree

            await self._change_tree(trees, conversation, now, compacted)
        return summary_id

    async def clear(self, conversation: str) -> int:
        """Delete the conversation: every message, summary and index entry of it; how many messages went."""
        conversation = check_conversation(conversation)
        trees, place = self._places()
        now = self._policy.clock().now()
        replaced: list[Tree] = []

        def emptied(tree: Tree | None) -> Tree:
            if tree is None or not tree.everything():
                raise _NothingToClear
            replaced[:] = [tree]
            return Tree(created_at=now, updated_at=now, deadline=now + CLEARED_SECONDS)

        try:
            with StorageErrors(conversation, self._policy.scope):
                await self._change_tree(trees, conversation, now, emptied)
                [tree] = replaced
                await self._policy.vault.delete_many(
                    place, [f"{conversation}/{node}" for node in tree.everything()], now
                )
        except _NothingToClear:
            return 0
        return len(tree.nodes)

    # -- reading ---------------------------------------------------------------------

    async def get(
        self, conversation: str, *, leaf_id: str | None = None, limit: int | None = None, compacted: bool = True
    ) -> list[dict[str, Any]]:
        """The messages from the root to ``leaf_id`` (default: the newest leaf), oldest first, all of them.

        With ``compacted`` (the default) a summary stands for the messages it replaces; ``limit`` keeps the last
        ones. An unknown conversation is an empty list; an unknown ``leaf_id`` is HISTORY_NOT_FOUND. ``page``
        reads a long conversation a bounded piece at a time.
        """
        conversation = check_conversation(conversation)
        limit = _checked_limit(limit)
        trees, place = self._places()
        now = self._policy.clock().now()
        async with turn(self._policy, self._policy.vault.keyring.owner_for(place.identity)):
            with STORE_ERRORS:
                tree = await self._tree(trees, conversation, now)
                ids = path_ids(tree, conversation, leaf_id, compacted, limit)
                found, _ = await read_newest(self._policy.vault, place, conversation, ids, now, None)
        parents = {} if tree is None else tree.parents()
        return [message_of(node, value, parents.get(node)) for node, value in found]

    async def page(
        self, conversation: str, *, leaf_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> HistoryPage:
        """The newest messages of ``get(conversation, leaf_id=..., limit=...)`` up to ``max_load_bytes`` (at least
        one), oldest first, and the sealed cursor of the older ones (None: no more): pass it back as ``cursor``."""
        conversation = check_conversation(conversation)
        limit = _checked_limit(limit)
        trees, place = self._places()
        owner = self._policy.vault.keyring.owner_for(place.identity)
        before = None if cursor is None else opened_cursor(self._policy.cursors, cursor, owner, conversation)
        if before is not None:
            leaf_id = before[0]
        now = self._policy.clock().now()
        async with turn(self._policy, owner):
            with STORE_ERRORS:
                tree = await self._tree(trees, conversation, now)
                ids = path_ids(tree, conversation, leaf_id, True, limit)
                if before is not None:
                    ids = older_than(ids, before[1], conversation)
                vault, most = self._policy.vault, self._policy.max_load_bytes
                found, left = await read_newest(vault, place, conversation, ids, now, most)
        parents = {} if tree is None else tree.parents()
        messages = [message_of(node, value, parents.get(node)) for node, value in found]
        more = left > 0 and bool(found)
        leaf = leaf_id if leaf_id is not None else (None if tree is None else tree.head)
        next_cursor = self._policy.cursors.make([owner, conversation, leaf or "", found[0][0]]) if more else None
        return HistoryPage(messages, next_cursor)

    async def leaves(self, conversation: str) -> list[dict[str, Any]]:
        """The ends of the conversation's branches, newest first: ``{"id", "depth"}`` (the root is depth 1)."""
        conversation = check_conversation(conversation)
        trees, _ = self._places()
        with STORE_ERRORS:
            tree = await self._tree(trees, conversation, self._policy.clock().now())
        if tree is None:
            return []
        return [{"id": leaf, "depth": len(tree.path(leaf))} for leaf in tree.leaves()]

    async def conversations(self) -> list[dict[str, Any]]:
        """Every conversation of the caller, most recently changed first."""
        trees, _ = self._places()
        now = self._policy.clock().now()
        with STORE_ERRORS:
            payloads = await self._policy.vault.payloads(trees, now)
        return listing(payloads)

    async def search(
        self,
        query: str,
        *,
        conversation: str | None = None,
        limit: int = 10,
        since: float | datetime | str | None = None,
        until: float | datetime | str | None = None,
        dates: bool = False,
        now: datetime | None = None,
    ) -> Hits:
        """The caller's messages that best match ``query``, best first, across every conversation or in one.

        Within one conversation the newest ``max_search_bytes`` of messages are searched (the hits' ``note`` says
        when older ones were not); across every conversation, the search index answers for all of them.
        ``since`` / ``until``: only messages from that window (their event time, ``at``: when they were said, by
        default when saved; seconds, datetimes or ISO 8601 texts; ``until`` exclusive, a date alone includes its
        day), left out before the ranking is cut. ``dates=True``: the query's own date or span ("in March", "last
        week") is read relative to ``now`` (an aware datetime; default: the clock), its words taken out of the
        query, and the messages said in that window score twice as much: preferred, not filtered (a date asked about
        is not always when it was told: "what did she paint last year", told this year).
        """
        if not isinstance(query, str):
            raise HistoryInvalidError(f"query is text to look for, not {query!r:.40}.")
        query, kept, preferred = self._asked(query, since, until, dates, now)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise HistoryInvalidError(f"limit is a whole number from 1 to {MAX_SEARCH_LIMIT}, not {limit!r:.40}.")
        trees, place = self._places()
        clock = self._policy.clock().now()
        policy = self._policy
        with STORE_ERRORS:
            if conversation is None:
                return Hits(await search_all(policy.vault, trees, place, query, limit, clock, kept, preferred))
            name = check_conversation(conversation)
            async with turn(policy, policy.vault.keyring.owner_for(place.identity)):
                most = policy.max_search_bytes
                return await search_one(
                    policy.vault, policy.analyzer, trees, place, name, query, limit, clock, most, kept, preferred
                )

    def _asked(
        self, query: str, since: object, until: object, dates: object, now: object
    ) -> tuple[str, Kept | None, Window | None]:
        """The query left to search, the window of event times ``search`` keeps and the one it prefers (None: none)."""
        kept = _window(since, until)
        if dates not in (True, False):
            raise HistoryInvalidError(f"dates is True or False, not {dates!r:.40}.")
        if now is not None and not (isinstance(now, datetime) and now.tzinfo is not None):
            raise HistoryInvalidError(f"now is a datetime with a time zone (datetime.now(UTC)), not {now!r:.60}.")
        if not dates:
            return query, kept, None
        moment = now if isinstance(now, datetime) else datetime.fromtimestamp(self._policy.clock().now(), UTC)
        asked = when(query, now=moment)
        if not asked.phrase:
            return query, kept, None
        since, until = (None if at is None else at.timestamp() for at in (asked.since, asked.until))
        return asked.query, kept, (since, until)

    # -- the tree ----------------------------------------------------------------------

    async def _tree(self, trees: Place, conversation: str, now: float) -> Tree | None:
        found = await self._policy.vault.read(trees, conversation, now)
        return None if found is None else Tree.load(found.value)

    async def _change_tree(
        self,
        trees: Place,
        conversation: str,
        now: float,
        change: Callable[[Tree | None], Tree],
        *,
        seen: Observed | None = None,
    ) -> None:
        """Apply ``change`` to the tree by compare-and-set, first against ``seen`` (when given), retrying with
        what is there now when a concurrent save got in first."""
        vault = self._policy.vault
        for attempt in range(_TREE_ATTEMPTS):
            observed = seen if attempt == 0 and seen is not None else await vault.observe(trees, conversation, now)
            current = None if observed.found is None else Tree.load(observed.found.value)
            changed = change(current)
            expires_at = changed.deadline
            quota = self._policy.tree_quota
            if await vault.swap(trees, conversation, observed, _json(changed.dump()), expires_at, now, quota):
                return
            await backoff(attempt)
        raise RememberConflictError(conversation, _TREE_ATTEMPTS)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _checked_limit(limit: object) -> int | None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise HistoryInvalidError(f"limit is a positive whole number of messages, not {limit!r:.40}.")
    return limit


def _window(since: object, until: object) -> Kept | None:
    """``search``'s window (None: none), or a HistoryInvalidError saying what it takes."""
    if since is None and until is None:
        return None
    try:
        start = None if since is None else Kept.moment(since)
    except ValueError as exc:
        raise HistoryInvalidError(f"since {exc}") from None
    try:
        return Kept(start, None if until is None else Kept.moment(until, end=True))
    except ValueError as exc:
        raise HistoryInvalidError(f"until {exc}") from None
