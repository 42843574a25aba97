"""``mcpkit remember purge``: whose values (a user id, or a static key's label), deleting them, and what it found."""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass

from mcpkit import ConfigurationError, StaticKeys

from ..sealing import Keyring
from ..stores import Store

__all__ = [
    "NOTHING_PURGED",
    "PurgeReport",
    "PurgeTarget",
    "add_user_arguments",
    "nothing_purged",
    "purge_target",
    "purge_user",
]

#: The exit code of a purge that found nothing kept under the user id (0: it deleted some; 1 and 2: it failed).
NOTHING_PURGED = 3

_STATIC_ID = re.compile(r"static:[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class PurgeTarget:
    """Whose values to delete: a user id, and the static key label and variable it was worked out from (if so)."""

    user_id: str
    label: str | None = None
    variable: str | None = None


@dataclass
class PurgeReport:
    """What ``purge`` deleted for one user id: ``deleted`` counts the store's entries, so a key with a change history
    counts twice (its value and its history), and vector shards count too."""

    user_id: str
    deleted: int

    def __str__(self) -> str:
        return f"deleted {self.deleted} entries (values and their histories) kept under user id {self.user_id!r}"


def add_user_arguments(command: argparse.ArgumentParser) -> argparse._MutuallyExclusiveGroup:
    """``--user USER_ID`` or ``--key-label LABEL`` (with ``--keys-from VARIABLE``), as ``purge_target`` reads them, on
    a command that acts on one user's values (purge, export, history); the group, for a command that adds a choice."""
    whose = command.add_mutually_exclusive_group(required=True)
    whose.add_argument("--user", metavar="USER_ID", help="the user id: a JWT's sub, static:<hash> or local:NAME")
    whose.add_argument(
        "--key-label",
        metavar="LABEL",
        help="a static key's label, like nour: its user id is worked out from its key in --keys-from",
    )
    command.add_argument(
        "--keys-from",
        metavar="VARIABLE",
        help="with --key-label: the environment variable holding the servers' keys as label=key pairs "
        "(MEMORY_KEYS, HELPDESK_KEYS)",
    )
    return whose


def purge_target(user: str | None, key_label: str | None, keys_from: str | None) -> PurgeTarget:
    """The user id from ``--user``, or from ``--key-label`` and ``--keys-from``; ConfigurationError saying why not."""
    if keys_from is not None and key_label is None:
        raise ConfigurationError(
            "--keys-from goes with --key-label LABEL (a static key's label); with --user, drop it."
        )
    if key_label is not None:
        return _labelled(key_label, keys_from)
    user_id = user or ""
    if not user_id.strip():
        raise ConfigurationError(
            "--user is empty: give the user id (a JWT's sub, static:<hash> for a static key, local:NAME), or "
            "--key-label LABEL --keys-from VARIABLE for a static key."
        )
    if user_id.lower().startswith("anon:"):
        raise ConfigurationError(
            f"--user {user_id!r} is an anonymous caller's id: nothing is ever kept under one (anonymous callers "
            "have no user scope, and their session values expire with the session). Nothing to purge."
        )
    if user_id.lower().startswith("static:") and not _STATIC_ID.fullmatch(user_id):
        raise ConfigurationError(
            f"--user {user_id!r} is not a static key's user id, which is static: and the first 32 lowercase hex "
            "digits of the key's SHA-256. Use --key-label LABEL --keys-from VARIABLE to have it worked out from "
            "the key."
        )
    return PurgeTarget(user_id)


def _labelled(label: str, variable: str | None) -> PurgeTarget:
    if variable is None:
        raise ConfigurationError(
            f"--key-label {label!r} needs --keys-from VARIABLE: the environment variable that holds the servers' "
            "static keys as label=key pairs (MEMORY_KEYS for the memory server, HELPDESK_KEYS for the help "
            "desk); the user id is worked out from the key, never the label."
        )
    text = os.environ.get(variable, "").strip()
    if not text:
        raise ConfigurationError(
            f"--keys-from {variable}: {variable} is not set here. Set it as the servers have it, "
            f'{variable}="{label}=KEY,..." (label=key pairs separated by commas), and run again.'
        )
    keys = StaticKeys(StaticKeys.parse(text, variable=variable))
    if label not in keys.labels:
        known = ", ".join(repr(known) for known in keys.labels)
        raise ConfigurationError(f"{variable} has no key labelled {label!r}; its labels are {known}.")
    return PurgeTarget(keys.user_id(label), label, variable)


async def purge_user(store: Store, keyring: Keyring, user_id: str) -> PurgeReport:
    """Delete everything kept under ``user_id`` (user scope, and session/tool scope on 2026-07-28)."""
    deleted = 0
    for owner in keyring.owners_for(json.dumps(["u", user_id])):
        deleted += await store.delete_owner(owner)
    return PurgeReport(user_id, deleted)


def nothing_purged(target: PurgeTarget) -> str:
    """Why a purge of ``target`` may have found nothing, and what to check."""
    said = (
        f"nothing is kept under user id {target.user_id!r}, so nothing was deleted (if it was purged already, "
        "there is nothing left to do). "
    )
    if target.label is not None:
        said += f"Check that {target.variable} holds the key labelled {target.label!r} that the servers use. "
    elif target.user_id.startswith("static:"):
        said += "A static key's id changes with the key: check that it is the key the servers use. "
    elif target.user_id.startswith("local:"):
        said += "Check the name the stdio server runs with (mcpkit run --stdio --user NAME). "
    else:
        said += (
            "A JWT's user id is its sub, exactly as issued; a static key's is static: and a hash of the key, never "
            f"its label: if {target.user_id!r} is a key's label, run again with --key-label {target.user_id} "
            "--keys-from VARIABLE (the variable with the servers' label=key pairs, such as MEMORY_KEYS or "
            "HELPDESK_KEYS). "
        )
    return said + "Check too that REMEMBER_SECRET is the servers' secret (and on Redis, --redis-prefix their prefix)."
