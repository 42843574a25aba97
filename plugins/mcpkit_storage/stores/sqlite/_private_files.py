"""The SQLite store's files that only their owner may read: the secret file beside the database, and the database."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import pwd
import secrets
import shlex
import stat
import tempfile
from pathlib import Path

from mcpkit import ConfigurationError

__all__ = ["create_database", "read_secret_file", "secret_beside", "secret_file_for"]

logger = logging.getLogger("mcpkit.remember")

#: Permission bits a private file must not have: any for the group or for others.
SHARED_BITS = 0o077

#: How often a start tries to create the secret file when another process's file vanishes under it.
CREATE_ATTEMPTS = 3


def secret_file_for(database: Path) -> Path:
    """Where the secret of the SQLite database at ``database`` is kept: ``<database>.secret``."""
    return database.with_name(database.name + ".secret")


def read_secret_file(database: Path) -> str | None:
    """The secret kept beside ``database``, or None when there is no secret file; refuses an unsafe one."""
    path = secret_file_for(database)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: the name is a symbolic link
            raise ConfigurationError(_symlink_problem(path)) from None
        raise ConfigurationError(f"Cannot read the secret file {path}: {exc.strerror}.") from None
    try:
        _check_private(path, os.fstat(fd))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            secret = handle.read().decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if not secret:
        raise ConfigurationError(
            f"The secret file {path} is empty. Restore it from the backup made with the database, or set "
            "REMEMBER_SECRET to the secret the stored values were sealed with."
        )
    return secret


def secret_beside(database: Path) -> str:
    """The secret of the secret file beside ``database``, made on first use (one secret for every process)."""
    path = secret_file_for(database)
    for _ in range(CREATE_ATTEMPTS):
        existing = read_secret_file(database)
        if existing is not None:
            return existing
        secret = secrets.token_urlsafe(32)
        try:
            won = _link_new_file(path, (secret + "\n").encode())
        except OSError as exc:
            raise ConfigurationError(f"Cannot create the secret file {path}: {exc.strerror}.") from None
        if won:
            logger.warning(
                "REMEMBER_SECRET is not set: created a secret for the SQLite store at %s (mode 0600). "
                "Keep it with the database; without it the stored values cannot be read.",
                path,
            )
            return secret
        # Another process linked its file first; it was complete before the link, so read it (again).
    raise ConfigurationError(
        f"The secret file {path} keeps appearing and disappearing while this process starts: is something "
        "deleting it? Set REMEMBER_SECRET, or keep the file in place."
    )


def create_database(database: Path) -> None:
    """Create the database file with mode 0600 if it is missing; warn when an existing one is open to others."""
    try:
        fd = os.open(database, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        _warn_if_shared(database)
    except OSError:
        return  # a directory we may not write, ...: SQLite's own open reports it
    else:
        os.close(fd)


def _link_new_file(path: Path, content: bytes) -> bool:
    """Write ``content`` to a fresh file and link it at ``path``; False if something is there already."""
    # mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600 and a random name, so nobody can prepare the draft.
    fd, draft = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".draft", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)  # never replaces: an existing file (or a planted link) makes it fail
        except FileExistsError:
            return False
    finally:
        os.unlink(draft)
    _sync_directory(path.parent)
    return True


def _sync_directory(directory: Path) -> None:
    """Make the new name durable, so a crash cannot keep values whose secret file is gone."""
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(OSError):  # a file system that cannot sync a directory: the link stands anyway
            os.fsync(fd)
    finally:
        os.close(fd)


def _check_private(path: Path, info: os.stat_result) -> None:
    quoted = shlex.quote(str(path))
    if not stat.S_ISREG(info.st_mode):
        raise ConfigurationError(
            f"The secret file {path} is not a regular file. Move it away; the next start makes a new secret "
            "(values sealed with an older one stay unreadable), or set REMEMBER_SECRET."
        )
    me = os.geteuid()
    if info.st_uid != me:
        raise ConfigurationError(
            f"The secret file {path} belongs to {_user(info.st_uid)}, not to {_user(me)}, who runs this process: "
            "its owner could have written a secret they know. If the store is theirs, run this as that user. "
            f"If the file is yours, run `chown {shlex.quote(_name(me))} {quoted} && chmod 600 {quoted}`. "
            "If nobody you trust made it, move it away and set REMEMBER_SECRET to the secret the values were "
            "sealed with (a new start without it makes a new secret)."
        )
    if info.st_mode & SHARED_BITS:
        raise ConfigurationError(
            f"The secret file {path} has mode {stat.S_IMODE(info.st_mode):04o}: other users of this machine "
            f"could read or replace it, and with it every stored value. Run `chmod 600 {quoted}`; if someone "
            "else may have read it, rotate to a new REMEMBER_SECRET (docs/stores.md, Rotating the secret)."
        )


def _symlink_problem(path: Path) -> str:
    try:
        target = os.path.realpath(path)
    except OSError:
        target = "?"
    return (
        f"The secret file {path} is a symbolic link (to {target}); it must be a regular file, so that nobody "
        f"can point it at a secret they know. If the target is yours, replace the link with it: "
        f"run `mv {shlex.quote(target)} {shlex.quote(str(path))} && chmod 600 {shlex.quote(str(path))}`."
    )


def _warn_if_shared(database: Path) -> None:
    shared = []
    for candidate in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
        try:
            mode = os.stat(candidate).st_mode
        except OSError:
            continue
        if mode & SHARED_BITS:
            shared.append(candidate)
    if shared:
        # A warning, not a refusal: the file holds ciphertext, and stores made before 0600 was the default
        # must keep starting. Others see entry counts, sizes and expiry times, never a value, a key or a user id.
        logger.warning(
            "The SQLite remember store %s can be read by other users of this machine (mode %04o): they cannot "
            "open the values nor read the keys, but they see how many there are, their sizes and expiry times. "
            "Run `chmod 600 %s`.",
            database,
            stat.S_IMODE(os.stat(shared[0]).st_mode),
            " ".join(shlex.quote(str(path)) for path in shared),
        )


def _user(uid: int) -> str:
    name = _name(uid)
    return f"uid {uid}" if name == str(uid) else f"{name} (uid {uid})"


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
