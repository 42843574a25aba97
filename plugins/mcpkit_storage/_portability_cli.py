"""``mcpkit remember export`` and ``import``: a store's values to an export file and back (docs/portability.md)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

from mcpkit import ConfigurationError
from mcpkit_search import MiniLM, SemanticUnavailableError

from ._progress import Progress
from .admin import NOTHING_PURGED, add_user_arguments, purge_target
from .backing import StoreConfig
from .portability import (
    CONFLICTS,
    ExportFileError,
    ExportReport,
    ImportReport,
    SealingKey,
    export_memory,
    import_memory,
)
from .sealing import Keyring
from .stores import Quota, Store

__all__ = ["OVER_QUOTA", "PASSPHRASE_VARIABLE", "add_commands"]

#: Where the commands read an export's passphrase from, unless --key-file or --plaintext (or a terminal prompt).
PASSPHRASE_VARIABLE = "REMEMBER_EXPORT_PASSPHRASE"

Execute = Callable[
    [argparse.Namespace, Callable[[Store, Keyring], Awaitable[Any]], Callable[[StoreConfig, Any], int]], int
]
#: The exit code of an import some of whose values did not fit their quota (the others were imported).
OVER_QUOTA = 4


def add_commands(actions: Any, execute: Execute, store_help: str, prefix_help: str) -> None:
    """Add ``export`` and ``import`` to ``mcpkit remember``; ``execute`` runs an action on the opened store."""
    sealing = (
        f"Sealed with AES-256-GCM under a key from a passphrase ({PASSPHRASE_VARIABLE}, or asked on a terminal; "
        "stretched with scrypt) or from --key-file; --plaintext writes or reads the values in clear, knowingly."
    )
    export_cmd = actions.add_parser(
        "export",
        help="write every remembered value (or one user's) to a JSON Lines file",
        description="Write the store's remembered values, conversations and context blocks to a versioned JSON Lines "
        "file (docs/portability.md), streaming. " + sealing,
    )
    export_cmd.add_argument("--store", required=True, help=store_help)
    whose = add_user_arguments(export_cmd)
    whose.add_argument("--all", action="store_true", help="every value of the store, every scope")
    export_cmd.add_argument("--out", metavar="FILE", help="the file to write (default: standard output)")
    _sealing_arguments(export_cmd)
    export_cmd.add_argument("--redis-prefix", default="mcpkit:remember:", help=prefix_help)
    export_cmd.set_defaults(handler=lambda args: _export_command(args, execute))
    import_cmd = actions.add_parser(
        "import",
        help="write the values of an export file into a store",
        description="Write the values of an export file into the store, each whole or not at all, with search "
        "postings made anew; time left to live is kept. A bad file is refused naming its line. " + sealing,
    )
    import_cmd.add_argument("--store", required=True, help=store_help)
    import_cmd.add_argument("file", metavar="FILE", help="the export file")
    import_cmd.add_argument(
        "--create",
        action="store_true",
        help="make the store if it is not there yet (a new SQLite file, the tables in a PostgreSQL database)",
    )
    import_cmd.add_argument(
        "--on-conflict",
        choices=CONFLICTS,
        default="skip",
        help="a key the store has already: keep it (skip, the default), replace it, or replace it when the file's "
        "value is newer",
    )
    import_cmd.add_argument(
        "--map-user", action="append", default=[], metavar="OLD=NEW", help="import user OLD's values as user NEW's"
    )
    import_cmd.add_argument(
        "--user", action="append", metavar="USER_ID", help="refuse the file if it holds another user's values"
    )
    import_cmd.add_argument(
        "--global", dest="allow_global", action="store_true", help="let the file write the global scope"
    )
    import_cmd.add_argument(
        "--max-values",
        type=_count,
        metavar="N",
        help="quota for every bucket: values per owner and bucket (default: the quotas the store's servers recorded)",
    )
    import_cmd.add_argument(
        "--max-bytes", type=_count, metavar="N", help="quota for every bucket: bytes per owner and bucket (as above)"
    )
    import_cmd.add_argument(
        "--semantic", action="store_true", help="also embed each searchable value with mcpkit[semantic]'s local model"
    )
    _sealing_arguments(import_cmd)
    import_cmd.add_argument("--redis-prefix", default="mcpkit:remember:", help=prefix_help)
    import_cmd.set_defaults(handler=lambda args: _import_command(args, execute))


def _count(text: str) -> int:
    """A quota's limit: a whole number, 0 or more (a negative one would refuse every write)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{number} is negative: a quota is a limit of 0 or more")
    return number


def _sealing_arguments(command: argparse.ArgumentParser) -> None:
    how = command.add_mutually_exclusive_group()
    how.add_argument("--key-file", metavar="FILE", help="seal (open) with the bytes of FILE (at least 32)")
    how.add_argument("--plaintext", action="store_true", help="no sealing: user data in clear, on purpose")


def _sealing_key(args: argparse.Namespace, *, confirm: bool) -> SealingKey | None:
    """The key the arguments ask for: a key file, the passphrase variable, a terminal prompt; None for plaintext."""
    try:
        if args.plaintext:
            return None
        if args.key_file:
            return SealingKey.key_file(args.key_file)
        passphrase = os.environ.get(PASSPHRASE_VARIABLE)
        if passphrase is None and sys.stdin.isatty():
            passphrase = getpass.getpass("Export passphrase: ")
            if confirm and getpass.getpass("The same again: ") != passphrase:
                raise ConfigurationError("The two passphrases differ; nothing was written.")
        if passphrase is None:
            raise ConfigurationError(
                f"An export is sealed: set {PASSPHRASE_VARIABLE}, or give --key-file FILE, or --plaintext to have "
                "user data in clear."
            )
        return SealingKey.passphrase(passphrase)
    except OSError as exc:
        raise ConfigurationError(f"The key file cannot be read: {exc.strerror} ({args.key_file}).") from None
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


@contextmanager
def _progress(verb: str, lines: IO[bytes] | None = None) -> Iterator[Progress]:
    """How far the command has got, on standard error: with ``lines`` (a file being read), a bar of its bytes read."""
    size = None
    if lines is not None:
        with suppress(OSError):
            size = os.fstat(lines.fileno()).st_size
    progress = Progress(
        verb,
        sys.stderr,
        terminal=sys.stderr.isatty(),
        total=size,
        done=None if lines is None else lines.tell,
    )
    try:
        yield progress
    finally:
        progress.close()


def _export_command(args: argparse.Namespace, execute: Execute) -> int:
    try:
        users = None if args.all else [purge_target(args.user, args.key_label, args.keys_from).user_id]
        key = _sealing_key(args, confirm=True)
    except ConfigurationError as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2

    async def export(store: Store, keyring: Keyring) -> ExportReport:
        out = sys.stdout.buffer if args.out is None else _private(args.out)
        try:
            with _progress("exported") as progress:
                report = await export_memory(
                    store, keyring, out, key=key, plaintext=args.plaintext, users=users, progress=progress
                )
        finally:
            if args.out is not None:
                out.close()
        return report

    def reported(config: StoreConfig, report: ExportReport) -> int:
        print(f"{config.describe()}: {report}", file=sys.stderr)  # standard output may be the file
        if users is not None and not report.exported:
            print(
                f"mcpkit remember: nothing is kept under user id {users[0]!r}: a static key's id is static:<hash>, "
                "never its label (use --key-label LABEL --keys-from VARIABLE); check REMEMBER_SECRET too.",
                file=sys.stderr,
            )
            return NOTHING_PURGED
        return 0

    return execute(args, export, reported)


def _private(path: str) -> IO[bytes]:
    """A file only its owner reads (an export holds user data, sealed or not)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")


def _import_command(args: argparse.Namespace, execute: Execute) -> int:
    try:
        key = _sealing_key(args, confirm=False)
        users = dict(_pair(each) for each in args.map_user)
        embedder = MiniLM() if args.semantic else None
    except (ConfigurationError, SemanticUnavailableError) as exc:
        print(f"mcpkit remember: {exc}", file=sys.stderr)
        return 2
    quota = None if args.max_values is None and args.max_bytes is None else Quota(args.max_values, args.max_bytes)

    try:
        lines = open(args.file, "rb")  # noqa: SIM115  closed below, after the store's run
    except OSError as exc:
        print(f"mcpkit remember: {args.file}: {exc.strerror}.", file=sys.stderr)
        return 2

    async def imported(store: Store, keyring: Keyring) -> ImportReport:
        try:
            with _progress("imported", lines) as progress:
                return await import_memory(
                    store,
                    keyring,
                    lines,
                    key=key,
                    plaintext=args.plaintext,
                    on_conflict=args.on_conflict,
                    users=users,
                    only_users=args.user,
                    allow_global=args.allow_global,
                    quota=quota,
                    embedder=embedder,
                    progress=progress,
                )
        except ExportFileError as exc:
            raise ConfigurationError(f"{args.file}, {exc}") from None

    def reported(config: StoreConfig, report: ImportReport) -> int:
        print(f"{config.describe()}: {report}")
        return OVER_QUOTA if report.over_quota else 0

    with lines:
        return execute(args, imported, reported)


def _pair(text: str) -> tuple[str, str]:
    old, equals, new = text.partition("=")
    if not equals or not old or not new:
        raise ConfigurationError(f"--map-user {text!r}: write it OLD_USER_ID=NEW_USER_ID.")
    return old, new
