"""``mcpkit remember rotate``, ``reindex`` and ``purge``: operator commands over a store."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import astuple, dataclass
from typing import Any

import anyio

from mcpkit import ConfigurationError
from mcpkit_search import Embedder, MiniLM, SemanticUnavailableError

from ._portability_cli import add_commands
from .admin import (
    NOTHING_PURGED,
    SEEN_SECONDS,
    PurgeReport,
    add_history_command,
    add_user_arguments,
    migrate,
    nothing_purged,
    purge_target,
    purge_user,
    rollout,
    unlisted_rotation,
)
from .backing import STORE_URLS, StoreConfig, keyring_from, make_store, parse_store_url, secret_from_env
from .base import RememberConflictError, RememberError, RememberStoreUnavailableError, is_internal_key
from .index import EmbedderFailedError, Semantic, is_shard_key
from .portability import frozen_heap
from .sealing import LEGACY_VERSION, ROTATED_TO, Keyring, Payload, UndecryptableError
from .stores import Address, Store, StoreUnavailableError
from .vault import Vault

__all__ = ["PurgeReport", "RotationReport", "purge_user", "register", "rotate"]


@dataclass
class RotationReport:
    """What ``rotate`` did: moved under the first secret, already there, unreadable, expired, changed meanwhile.

    With ``reindex``, the entries already current are rewritten too (``reindexed``), with their postings.
    """

    rotated: int = 0
    current: int = 0
    unreadable: int = 0
    expired: int = 0
    changed: int = 0
    reindexed: int = 0
    embedded: int = 0

    def __str__(self) -> str:
        text = (
            f"rotated {self.rotated}, already current {self.current}, "
            f"unreadable {self.unreadable}, expired {self.expired}"
        )
        if self.reindexed:
            text += f", reindexed {self.reindexed}"
        if self.embedded:
            text += f", embedded {self.embedded}"
        if self.changed:
            text += f", changed while rotating {self.changed} (run the command again)"
        if not any(astuple(self)):
            text += " (the store holds no values: is it the one the servers use?)"
        return text


#: Times a value that changed under ``rotate`` is looked at again before it is left for the next run.
_MIGRATE_ATTEMPTS = 3


async def rotate(
    store: Store,
    keyring: Keyring,
    now: float,
    *,
    reindex: bool = False,
    embedder: Embedder | None = None,
    keys: bool = True,
) -> RotationReport:
    """Rewrite every entry sealed under an older secret, or in mcpkit 0.1's layout, under the first secret.

    Each entry keeps its search postings, or their absence (those of mcpkit 0.1 have none, unless they are
    the memory tools' notes); ``reindex`` rewrites every other live entry too, with postings: after turning
    ``RememberPlugin(search=True)`` on for a store that already holds values. With an ``embedder`` (which
    implies ``reindex``), each value without a vector of that model gets one, for search by meaning
    (``embedded``). ``keys=False``: keys are left out of the postings and vectors, as for servers built with
    ``RememberPlugin(search_keys=False)``. The store is read a page at a
    time. Each move is one atomic compare-and-set that writes the newest copy at the primary address and
    deletes the others only if none of them changed meanwhile, so a value forgotten or purged while
    ``rotate`` runs stays forgotten, and a newer write is never replaced. Before anything moves, the store notes
    the first secret's key id, so a server that lacks it says so rather than read moved values as missing.
    """
    await store.note(ROTATED_TO, keyring.primary_key_id)
    semantic = None if embedder is None else Semantic(embedder, keys=keys)
    vault = Vault(store, keyring, semantic=semantic, search_keys=keys)  # with an embedder, moves land in shards too
    reindex = reindex or semantic is not None
    report = RotationReport()
    made: list[bytes] = []  # the vectors the current move made

    async def embed(best: Payload) -> bytes:
        if semantic is None or semantic.has_vector(best):
            return b""
        vector = await semantic.vector(best.key, best.value_json, caller=best.identity, strict=True)
        made.append(vector)
        return vector

    if semantic is not None:
        await _load(embedder)
        # Fails now if it fails; learns the length.
        await semantic.vector("probe", '"probe"', caller="probe", strict=True)
        await _drop_shards(store, vault, now)  # built anew from the values below: none stale, none missing
    # Addresses this run wrote (as hashes: a collision only miscounts): met again later, they are not "current".
    written: set[int] = set()
    legacy_left = 0
    async for record in store.scan():
        address = Address(record.owner, record.bucket, record.key)
        legacy = record.entry.data[:1] == bytes([LEGACY_VERSION])
        try:
            payload, stale = vault.open_record(address, record.entry)
        except (UndecryptableError, ValueError):
            report.unreadable += 1
            legacy_left += legacy
            continue
        if is_shard_key(payload.key):  # vector shards name values by address: the old ones go, searches make anew
            if stale:
                await store.delete(*address, now)
            continue
        if is_internal_key(payload.key):  # a key's versions: moved when stale, never indexed, counted with no value
            if stale and record.entry.live(now) and payload.live(now):
                await migrate(vault, payload, now, indexed=False)
            continue
        if not (record.entry.live(now) and payload.live(now)):
            report.expired += 1
            legacy_left += legacy  # judged by this host's clock, and its plain names stay until purged
            continue
        if not stale and (not reindex or hash(address) in written):
            if hash(address) not in written:
                report.current += 1
            continue
        outcome = "changed"
        for _ in range(_MIGRATE_ATTEMPTS):
            made.clear()
            indexed = True if reindex or record.indexed else None
            outcome = await migrate(vault, payload, now, indexed=indexed, embed=None if semantic is None else embed)
            if outcome != "changed":
                break
        report.embedded += bool(made) and outcome in ("moved", "cleaned")
        if outcome == "changed":
            report.changed += 1
            legacy_left += legacy
        elif outcome == "gone":
            report.expired += 1
        elif stale:
            report.rotated += 1
        else:
            report.reindexed += 1
        if outcome in ("moved", "cleaned"):
            place = keyring.locate(payload.identity, payload.bucket, payload.key)[0]
            written.add(hash(place))
    if store.legacy and not legacy_left:
        await store.settle_legacy()
    return report


async def _drop_shards(store: Store, vault: Vault, now: float) -> None:
    """Delete every vector shard of the store (a pass of its own: the values' pass then writes the new ones)."""
    async for record in store.scan():
        address = Address(record.owner, record.bucket, record.key)
        try:
            payload, _ = vault.open_record(address, record.entry)
        except (UndecryptableError, ValueError):
            continue
        if is_shard_key(payload.key):
            await store.delete(*address, now)


async def _load(embedder: object) -> None:
    """Await the embedder's optional ``load`` (for ``MiniLM``: check the model files and load them)."""
    load = getattr(embedder, "load", None)
    if load is not None:
        await load()


_KEYS_HELP = "leave keys out of what is searched, as servers whose plugin has search_keys=False"
_FORCE_HELP = "run even when a server seen on the store lacks the new secret (one stopped for good)"
_ROLLOUT = (
    "Every running server must hold the new secret already (REMEMBER_SECRET=old,new, then new,old: "
    "docs/stores.md#rotating-the-secret): a server that does not cannot read the values moved under it, and refuses "
    "calls on the store (REMEMBER_STORE_UNAVAILABLE) until it is restarted with it. Before it moves anything the "
    "command says so, and reads the secrets (key ids) each server notes in the store every minute: it refuses, with "
    f"exit code 2, when a server seen in the last {SEEN_SECONDS / 60:g} minutes lacks the new one, unless --force."
)
_PREFIX_HELP = "key prefix of a Redis store (default: mcpkit:remember:, as the plugins' redis_prefix=...)"


_STORE_HELP = f"the servers' store: {', '.join(STORE_URLS[:-1])} or {STORE_URLS[-1]}"


def register(commands: Any) -> None:
    """Add ``mcpkit remember ...`` to the mcpkit command."""
    remember = commands.add_parser(
        "remember",
        help="manage what the plugins' stores keep",
        description="Operator commands for the store of mcpkit's plugins. Secrets come from REMEMBER_SECRET "
        "(for SQLite without it, from the secret file beside the database).",
    )
    actions = remember.add_subparsers(title="actions", metavar="ACTION")
    rotate_cmd = actions.add_parser(
        "rotate",
        help="rewrite every value under the first secret of REMEMBER_SECRET",
        description="With REMEMBER_SECRET=new,old set, rewrite every entry sealed under an older secret under "
        "the new one, then report counts. Afterwards the old secrets can be removed. " + _ROLLOUT,
    )
    rotate_cmd.add_argument("--store", required=True, help=_STORE_HELP)
    rotate_cmd.add_argument("--redis-prefix", default="mcpkit:remember:", help=_PREFIX_HELP)
    rotate_cmd.add_argument("--without-keys", action="store_true", help=_KEYS_HELP)
    rotate_cmd.add_argument("--force", action="store_true", help=_FORCE_HELP)
    rotate_cmd.set_defaults(handler=_rotate_command)
    reindex_cmd = actions.add_parser(
        "reindex",
        help="rewrite every value with its search postings (after turning search=True on)",
        description="Rewrite every live value, unchanged, with its search postings, so that values kept before "
        "search=True was turned on can be found; entries under an older secret are rotated "
        "on the way. Safe to run while servers serve. " + _ROLLOUT,
    )
    reindex_cmd.add_argument("--store", required=True, help=_STORE_HELP)
    reindex_cmd.add_argument("--redis-prefix", default="mcpkit:remember:", help=_PREFIX_HELP)
    reindex_cmd.add_argument(
        "--semantic",
        action="store_true",
        help="also give every value without one a vector of mcpkit[semantic]'s local model, for search by meaning",
    )
    reindex_cmd.add_argument("--without-keys", action="store_true", help=_KEYS_HELP)
    reindex_cmd.add_argument("--force", action="store_true", help=_FORCE_HELP)
    reindex_cmd.set_defaults(handler=_reindex_command)
    purge_cmd = actions.add_parser(
        "purge",
        help="delete everything kept under one user id",
        description="Delete every value kept under one user id in every scope keyed by it, and report the count. "
        f"Exit code {NOTHING_PURGED} when nothing was kept under it (already purged, or not the id the servers "
        "use: a static key's id is static:<hash of the key>, never its label).",
    )
    purge_cmd.add_argument("--store", required=True, help=_STORE_HELP)
    add_user_arguments(purge_cmd)
    purge_cmd.add_argument("--redis-prefix", default="mcpkit:remember:", help=_PREFIX_HELP)
    purge_cmd.set_defaults(handler=_purge_command)
    add_commands(actions, _execute, _STORE_HELP, _PREFIX_HELP)
    add_history_command(actions, _execute, _STORE_HELP, _PREFIX_HELP)
    remember.set_defaults(handler=lambda _: remember.print_help() or 2)


def _keyring(config: StoreConfig) -> Keyring:
    """The servers' secrets: REMEMBER_SECRET, else (SQLite) the secret file beside the database."""
    secrets = [part.strip() for part in (secret_from_env() or "").split(",") if part.strip()]
    if not secrets and config.kind.read_secret is not None:
        secret = config.kind.read_secret(config.where)
        secrets = [secret] if secret else []
    if not secrets:
        raise ConfigurationError("Set REMEMBER_SECRET to the secret(s) the servers use (first = current).")
    return keyring_from(secrets, placed=config.kind.placed)


def _rotate_command(args: argparse.Namespace) -> int:
    keys = not args.without_keys
    return _execute(args, lambda store, keyring: _rolled_out(store, keyring, args.force, keys=keys))


def _reindex_command(args: argparse.Namespace) -> int:
    try:
        embedder = MiniLM() if args.semantic else None
    except SemanticUnavailableError as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2
    keys = not args.without_keys
    return _execute(
        args,
        lambda store, keyring: _rolled_out(store, keyring, args.force, reindex=True, embedder=embedder, keys=keys),
    )


async def _rolled_out(store: Store, keyring: Keyring, force: bool, **options: Any) -> RotationReport:
    """``rotate``, once it has said what every running server needs, and refused (ConfigurationError: exit code 2)
    when the store's notes show a server without the new secret, unless ``force``."""
    now = time.time()
    said, refusal = rollout(await store.notes(), keyring, now)
    print(said, flush=True)
    if refusal is not None and not force:
        raise ConfigurationError(f"Nothing was moved: {refusal}")
    return await rotate(store, keyring, now, **options)


def _purge_command(args: argparse.Namespace) -> int:
    try:
        target = purge_target(args.user, args.key_label, args.keys_from)
    except ConfigurationError as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2

    def reported(config: StoreConfig, report: PurgeReport) -> int:
        if report.deleted:
            label = "" if target.label is None else f" (the key labelled {target.label!r} in {target.variable})"
            print(f"{config.describe()}: {report}{label}")
            return 0
        print(f"mcpkit remember: {config.describe()}: {nothing_purged(target)}", file=sys.stderr)
        return NOTHING_PURGED

    async def purge(store: Store, keyring: Keyring) -> PurgeReport:
        unlisted = unlisted_rotation(await store.notes(), keyring)
        if unlisted is not None:
            print(f"mcpkit remember: warning: {unlisted}, and purge again.", file=sys.stderr)
        return await purge_user(store, keyring, target.user_id)

    return _execute(args, purge, reported)


def _printed(config: StoreConfig, report: object) -> int:
    print(f"{config.describe()}: {report}")
    return 0


def _execute(
    args: argparse.Namespace,
    action: Callable[[Store, Keyring], Awaitable[Any]],
    reported: Callable[[StoreConfig, Any], int] = _printed,
) -> int:
    """Run ``action`` on the store; exit code 2 for a configuration mistake, 1 for a store that fails or is not there.

    The store is opened before the secrets are read, so a store that is not there (a SQLite file that does not
    exist, a Redis that does not answer) is said first; it is opened as it is (``create=False``): a command never
    makes a new store, nor a remember store in a file or database of something else, unless asked (import --create).
    """
    try:
        config = parse_store_url(args.store)
        if config.kind.in_process:
            raise ConfigurationError(
                f"The {config.kind.label} store lives inside one server process; there is nothing to manage here."
            )
        store = make_store(config, args.redis_prefix, create=getattr(args, "create", False))  # import --create
    except ValueError as exc:  # ConfigurationError, or a Redis prefix the store refuses
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2

    async def go() -> Any:
        try:
            await store.open()
        except ValueError as exc:  # a store URL its client cannot read: a port or database that is not a number
            raise ConfigurationError(f"The store URL for {config.describe()} cannot be used: {exc}") from None
        try:
            return await action(store, _keyring(config))
        finally:
            await store.close()

    try:
        with frozen_heap():  # a process of its own: its modules are never garbage
            report = anyio.run(go)
    except ConfigurationError as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2
    except (StoreUnavailableError, EmbedderFailedError) as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 1
    except SemanticUnavailableError as exc:  # the model's files are missing or not the pinned ones
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2
    except (RememberConflictError, RememberStoreUnavailableError) as exc:  # other writers, or the store, failed it
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 1
    except (RememberError, ValueError) as exc:  # a value or name the store refuses: how it was called
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2
    return reported(config, report)
