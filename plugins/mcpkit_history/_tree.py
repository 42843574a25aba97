"""A conversation's tree: which message follows which, in the order they were saved, and its compactions.

One sealed value per conversation, changed only by compare-and-set (docs/architecture.md says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._errors import HistoryInvalidError, HistoryNotFoundError

__all__ = ["Members", "Tree", "chained", "grown", "listing"]


@dataclass(slots=True)
class Tree:
    created_at: float
    updated_at: float
    ttl: float | None = None
    #: (message id, parent id or None), in the order they were saved
    nodes: list[tuple[str, str | None]] = field(default_factory=list)
    #: (summary id, the id of the last message it replaces), in the order they were made
    compactions: list[tuple[str, str]] = field(default_factory=list)
    #: The tree's own deadline: the latest of its messages' (None: one of them is kept until forgotten), so the
    #: tree never expires before a message it holds, which would leave that message unreachable.
    deadline: float | None = None

    @classmethod
    def load(cls, value: Any) -> Tree:
        """From its stored form: ids in save order and each parent as a position in them (-1: none), which parse
        several times faster than pairs of strings, since every read of a conversation parses its tree."""
        ids: list[str] = value["ids"]
        nodes = [
            (node, ids[parent] if parent >= 0 else None) for node, parent in zip(ids, value["parents"], strict=True)
        ]
        compactions = [(summary, through) for summary, through in value["compactions"]]
        return cls(value["created_at"], value["updated_at"], value["ttl"], nodes, compactions, value["deadline"])

    def dump(self) -> dict[str, Any]:
        positions = {node: position for position, (node, _) in enumerate(self.nodes)}
        return {
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "ttl": self.ttl,
            "ids": [node for node, _ in self.nodes],
            "parents": [-1 if parent is None else positions[parent] for _, parent in self.nodes],
            "compactions": [list(compaction) for compaction in self.compactions],
            "deadline": self.deadline,
        }

    def holds(self, deadline: float | None) -> None:
        """A message with ``deadline`` (None: none) joins the tree: keep the tree at least that long."""
        if not self.nodes and not self.compactions:
            self.deadline = deadline
        elif self.deadline is not None:
            self.deadline = None if deadline is None else max(self.deadline, deadline)

    def parents(self) -> dict[str, str | None]:
        return dict(self.nodes)

    @property
    def head(self) -> str | None:
        """The newest leaf: the message saved last."""
        return self.nodes[-1][0] if self.nodes else None

    def leaves(self) -> list[str]:
        """Every message without a child, newest first."""
        parented = {parent for _, parent in self.nodes if parent is not None}
        return [node for node, _ in reversed(self.nodes) if node not in parented]

    def path(self, leaf: str) -> list[str]:
        """The ids from the root to ``leaf``, inclusive (``leaf`` must be in the tree)."""
        parents = self.parents()
        path: list[str] = []
        current: str | None = leaf
        while current is not None:
            path.append(current)
            current = parents[current]
        path.reverse()
        return path

    def summaries(self) -> set[str]:
        return {summary for summary, _ in self.compactions}

    def compaction_on(self, path: list[str]) -> tuple[str, int] | None:
        """The summary that replaces the longest start of ``path``, and how many messages it replaces."""
        where = {node: position for position, node in enumerate(path)}
        best: tuple[str, int] | None = None
        for summary, through in self.compactions:
            position = where.get(through)
            if position is not None and (best is None or position + 1 >= best[1]):
                best = (summary, position + 1)  # the later of two summaries of the same start wins
        return best

    def everything(self) -> list[str]:
        """Every message id kept for the conversation: its messages and its summaries."""
        return [node for node, _ in self.nodes] + [summary for summary, _ in self.compactions]


class Members:
    """Which ids a stored tree holds, and their parents, without building the tree (what a search needs)."""

    __slots__ = ("_ids", "_parents", "_positions", "_summaries")

    def __init__(self, value: Any) -> None:
        self._ids: list[str] = value["ids"]
        self._parents: list[int] = value["parents"]
        self._positions = dict(zip(self._ids, range(len(self._ids)), strict=True))
        self._summaries = {summary for summary, _ in value["compactions"]}

    def __contains__(self, node: object) -> bool:
        return node in self._positions or node in self._summaries

    def parent(self, node: str) -> str | None:
        position = self._positions.get(node)
        if position is None or self._parents[position] < 0:
            return None
        return self._ids[self._parents[position]]


def chained(
    conversation: str,
    tree: Tree | None,
    messages: list[dict[str, Any]],
    parent_id: str | None,
    max_messages: int,
) -> list[dict[str, Any]]:
    """The messages with their parents: the first after ``parent_id`` (or the newest leaf), each after the last."""
    parents = {} if tree is None else tree.parents()
    taken = set(parents) | (set() if tree is None else tree.summaries())
    if parent_id is not None and parent_id not in parents:
        raise HistoryNotFoundError(conversation, parent_id, "parent message")
    if len(parents) + len(messages) > max_messages:
        raise HistoryInvalidError(
            f"The conversation {conversation!r} would hold {len(parents) + len(messages):,} messages; it may hold at "
            f"most {max_messages:,}: compact it and start a new conversation that continues from the summary."
        )
    previous = parent_id if parent_id is not None else (None if tree is None else tree.head)
    chain = []
    for message in messages:
        if message["id"] in taken:
            raise HistoryInvalidError(
                f"The id {message['id']!r} is already a message of {conversation!r}; leave id out for a new one."
            )
        chain.append({**message, "parent_id": previous})
        previous = message["id"]
    return chain


def grown(
    conversation: str,
    tree: Tree | None,
    chain: list[dict[str, Any]],
    parent_id: str | None,
    now: float,
    ttl: float | None,
    deadline: float | None,
) -> Tree:
    """The tree with ``chain`` added, as of now (a concurrent save may have moved the head meanwhile). The empty
    tree a clear leaves is no conversation: saving there starts a new one, created now."""
    if tree is None or not tree.everything():
        tree = Tree(created_at=now, updated_at=now)
    parents = tree.parents()
    if parent_id is not None and parent_id not in parents:  # the parent's conversation was cleared meanwhile
        raise HistoryNotFoundError(conversation, parent_id, "parent message")
    if any(message["id"] in parents for message in chain):  # this save, resent after it landed: nothing to add
        return tree
    if parent_id is None:  # after the newest leaf as it is now, which another save may have moved
        chain[0]["parent_id"] = tree.head
    tree.holds(deadline)
    tree.nodes.extend((message["id"], message["parent_id"]) for message in chain)
    tree.updated_at = now
    if ttl is not None:
        tree.ttl = ttl
    return tree


class _Stored(Protocol):
    def value(self) -> Any: ...


def listing(stored: Mapping[str, _Stored]) -> list[dict[str, Any]]:
    """What ``conversations()`` says of each stored tree by name, newest change first (cleared ones left out)."""
    listed: list[dict[str, Any]] = []
    for name, payload in stored.items():
        tree = Tree.load(payload.value())
        if not tree.nodes:  # cleared
            continue
        listed.append(
            {
                "conversation": name,
                "messages": len(tree.nodes),
                "branches": len(tree.leaves()),
                "created_at": tree.created_at,
                "updated_at": tree.updated_at,
                "ttl_seconds": tree.ttl,
            }
        )
    listed.sort(key=lambda item: (-float(item["updated_at"]), str(item["conversation"])))
    return listed
