"""``mcpkit remember history``: a key's change history as an operator reads it, values left out unless asked for."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from mcpkit import ConfigurationError, iso_time

from ..base import Place
from ..sealing import Keyring
from ..stores import Store
from ..vault import Vault, Version, versions_key, versions_of
from ._purge import add_user_arguments, purge_target

__all__ = ["NO_HISTORY", "add_history_command", "history_lines", "key_history"]

#: The exit code of a history command that found no history of the key (0: printed it; 1 and 2: it failed).
NO_HISTORY = 3


async def key_history(store: Store, keyring: Keyring, user_id: str, bucket: str, key: str, now: float) -> list[Version]:
    """The versions of ``key`` in the user's ``bucket`` (``user``: their user scope), oldest first."""
    vault = Vault(store, keyring)
    found = await vault.read(Place(json.dumps(["u", user_id]), bucket), versions_key(key), now)
    return [] if found is None else versions_of(found.value, now)


def history_lines(versions: Sequence[Version], *, values: bool) -> list[str]:
    """One line per version: when, the event, its source and who wrote it; its value only with ``values``."""
    lines = []
    for version in versions:
        when = "unknown time" if version.written_at is None else iso_time(version.written_at)
        fields = [when, version.event]
        kept = version.provenance
        if kept is not None:
            fields.append(f"source={kept.source}")
            if kept.at is not None and kept.at != version.written_at:
                fields.append(f"at={iso_time(kept.at)}")
            fields += [f"{name}={part}" for name, part in (("app", kept.app), ("tool", kept.tool)) if part]
            if kept.client:
                fields.append(f"client={kept.client} {kept.client_version or ''}".rstrip())
            if kept.era:
                fields.append(f"era={kept.era}")
        if version.expires_at is not None:
            fields.append(f"expires={iso_time(version.expires_at)}")
        if values and version.value is not None:
            fields.append("value=" + json.dumps(version.value, ensure_ascii=False))
        lines.append("  ".join(fields))
    return lines


class _Described(Protocol):
    """A store's configuration, as far as a report names it (``backing.StoreConfig``)."""

    def describe(self) -> str: ...


#: How ``mcpkit remember`` runs an action on a store: (arguments, action, how to report its result) -> exit code.
Execute = Callable[
    [argparse.Namespace, Callable[[Store, Keyring], Awaitable[Any]], Callable[[_Described, Any], int]], int
]


def add_history_command(actions: Any, execute: Execute, store_help: str, prefix_help: str) -> None:
    """Add ``mcpkit remember history`` to the remember command's actions."""
    command = actions.add_parser(
        "history",
        help="show a key's change history: its last versions, each with its event and provenance",
        description="Print the last versions of one key kept under a user id (as many as the plugin's history=N "
        "keeps), oldest first: when, the event (set, update, delete, expire, import), the source and who wrote it. "
        f"Values are left out unless --values asks for them. Exit code {NO_HISTORY} when the key has no history.",
    )
    command.add_argument("--store", required=True, help=store_help)
    add_user_arguments(command)
    command.add_argument(
        "--bucket",
        default="user",
        help="where the key lives: user (a tool's scope='user', the memory server; the default) or memory.user "
        "(the notes of the memory tools)",
    )
    command.add_argument("--values", action="store_true", help="print each version's value too")
    command.add_argument("--redis-prefix", default="mcpkit:remember:", help=prefix_help)
    command.add_argument("key", help="the key")

    def run(args: argparse.Namespace) -> int:
        try:
            user_id = purge_target(args.user, args.key_label, args.keys_from).user_id
        except ConfigurationError as exc:
            print(f"mcpkit remember: {exc}", file=sys.stderr)
            return 2

        def reported(config: _Described, versions: list[Version]) -> int:
            if not versions:
                print(
                    f"mcpkit remember: {config.describe()}: no history of that key under user id {user_id!r} (a "
                    "history is kept only with the plugin's history=N; a static key's id is static:<hash>, never "
                    "its label: use --key-label LABEL --keys-from VARIABLE)",
                    file=sys.stderr,
                )
                return NO_HISTORY
            print("\n".join(history_lines(versions, values=args.values)))
            return 0

        async def read(store: Store, keyring: Keyring) -> list[Version]:
            return await key_history(store, keyring, user_id, args.bucket, args.key, time.time())

        return execute(args, read, reported)

    command.set_defaults(handler=run)
