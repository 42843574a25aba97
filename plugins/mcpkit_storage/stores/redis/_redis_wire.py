"""How the Redis stores write values and postings: the packed entry (a deadline before the sealed bytes), a blind
term's name, a compare-and-set's arguments, the scripts' answers, the store's notes, and a URL fit for messages."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from urllib.parse import urlsplit

from redis import exceptions as redis_errors
from redis.asyncio import Redis, RedisCluster

from mcpkit_search import Stats

from .. import Entry, Postings, Quota, QuotaExceededError, Ranking, StoreUnavailableError
from . import _redis_scripts as lua

__all__ = [
    "HEADER",
    "TERM_HEX_DIGITS",
    "expecting",
    "live",
    "never_sent",
    "outcome",
    "outcomes",
    "posting",
    "ranking",
    "reaching",
    "read_dated",
    "redacted",
    "refused_before_running",
    "searching",
    "term",
    "texts",
    "unpack",
    "writing",
]

#: Hex digits of a blind term in the search index's member names (63 bits, zero-padded).
TERM_HEX_DIGITS = 16
HEADER = struct.Struct(">d")


def term(term: int) -> str:
    """A blind term as the scripts name it: fixed-width hex, so one term's postings are one ZRANGEBYLEX range."""
    return f"{term:0{TERM_HEX_DIGITS}x}"


def posting(posting: tuple[int, int]) -> str:
    """One (term, count) of a value's postings as the scripts read it: ``term:count``."""
    return f"{term(posting[0])}:{posting[1]}"


def expecting(expected: bytes | None) -> list[str | bytes]:
    """A compare-and-set's expectation as script arguments: flag and bytes."""
    return ["0", b""] if expected is None else ["1", expected]


def outcome(code: int, quota: Quota | None) -> bool:
    """PUT's and SWAP's answer: True (done), False (another writer first), or the quota refusal raised."""
    if quota is not None and code == lua.QUOTA_VALUES:
        raise QuotaExceededError("values", quota.values or 0)
    if quota is not None and code == lua.QUOTA_BYTES:
        raise QuotaExceededError("bytes", quota.bytes or 0)
    return bool(code)


def outcomes(code: int, which: int, quotas: list[Quota | None]) -> list[bool | QuotaExceededError]:
    """SWAP_ALL's answer ({code, which}) as ``swap_many(whole=True)`` gives it: all True, or write ``which`` (from 1)
    with its reason (False, or its quota's refusal) and every other one False."""
    results: list[bool | QuotaExceededError] = [code == 1] * len(quotas)
    if code != 1:
        try:
            results[which - 1] = outcome(code, quotas[which - 1])
        except QuotaExceededError as exc:
            results[which - 1] = exc
    return results


def writing(
    base: str,
    bucket: str,
    key: str,
    data: bytes,
    expires_at: float | None,
    now: float,
    quota: Quota | None,
    index: Postings | None,
    margin_ms: int,
    created: float | None = None,
) -> list[str | bytes]:
    """The arguments PUT, SWAP and SWAP_ALL share: address, value bytes, Redis' expiry (``margin_ms`` past the
    deadline), index score, quota, postings, first-write time ('': keep or now)."""
    value = HEADER.pack(math.inf if expires_at is None else expires_at) + data
    px = "" if expires_at is None else str(max(1, math.ceil((expires_at - now) * 1000)) + margin_ms)
    score = "inf" if expires_at is None else repr(float(expires_at))
    limits = ("", "") if quota is None else tuple("" if limit is None else str(limit) for limit in quota)
    spec = "" if index is None else " ".join([str(index.length), *map(posting, index.terms.items())])
    return [base, bucket, key, value, px, score, *limits, spec, "" if created is None else repr(float(created))]


def searching(
    base: str, bucket: str, terms: Sequence[int], limit: int, stats: Stats | None, within: Sequence[Sequence[int]]
) -> list[str]:
    """SEARCH's arguments (after the time and margin): address, limit, the statistics to score with ('': the
    bucket's own), how many groups, each group's terms space-separated, then the query's terms."""
    given = "" if stats is None else " ".join(map(str, (stats.documents, stats.length, *stats.frequencies)))
    groups = [" ".join(map(term, group)) for group in within]
    return [base, bucket, str(limit), given, str(len(groups)), *groups, *map(term, terms)]


def ranking(flat: list[bytes], terms: int) -> Ranking:
    """SEARCH's answer for ``terms`` query terms: the bucket's statistics, then key and score for each hit."""
    at = 2 + terms
    own = Stats(int(flat[0]), int(flat[1]), tuple(int(n) for n in flat[2:at]))
    return Ranking(own, [(flat[i].decode(), float(flat[i + 1])) for i in range(at, len(flat), 2)])


def refused_before_running(exc: BaseException) -> bool:
    """Whether Redis refused a command before running any of it (read-only replica, no permission, script not
    loaded, a cluster's redirection, out of memory): nothing of it was made."""
    return isinstance(exc, _REFUSED_BEFORE_RUNNING)


def never_sent(exc: BaseException) -> bool:
    """Whether a failed command cannot have reached Redis: no connection could be made for it (or the pool
    had none left to give).

    Any other failure (a timeout, a connection dropped after the command was written) may
    come after Redis ran it.
    """
    return isinstance(exc, redis_errors.MaxConnectionsError) or "connecting to" in str(exc)


def unpack(raw: bytes, created: bytes | None = None) -> Entry | None:
    """The entry packed in value bytes (with its first-write time as the bucket's hash of them holds it, when read),
    or None for bytes this store did not write."""
    if len(raw) < HEADER.size:
        return None
    (deadline,) = HEADER.unpack_from(raw)
    first = None if created is None else float(created)
    return Entry(raw[HEADER.size :], None if deadline == math.inf else deadline, first)


async def read_dated(
    client: Redis | RedisCluster, reads: Sequence[tuple[str, str, str]], now: float
) -> list[Entry | None]:
    """The live entry of each (value name, created hash, key) with its first-write time: a GET and an HGET each,
    in one pipeline (one round trip; ``get_many_created``, the read of ``self.remember.info``)."""
    if not reads:
        return []
    async with client.pipeline(transaction=False) as pipe:
        for value, created, key in reads:
            pipe.get(value)
            pipe.hget(created, key)
        answers = iter(await pipe.execute())
    entries = [None if raw is None else unpack(raw, created) for raw, created in zip(answers, answers, strict=True)]
    return [entry if entry is not None and entry.live(now) else None for entry in entries]


def texts(raw: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    """A hash as Redis answers it (bytes), as text: the store's notes."""
    return {_text(name): _text(value) for name, value in raw.items()}


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def live(raw: bytes | None, now: float) -> Entry | None:
    entry = None if raw is None else unpack(raw)
    return entry if entry is not None and entry.live(now) else None


def redacted(url: str) -> str:
    """The URL without password or query, safe for error messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a number: say nothing rather than echo what may be a secret
        port = ""
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


_UNREACHABLE = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)
#: Refusals after which Redis has certainly not run a write (it refused to start it). Out of memory is not
#: among them: Redis refuses inside a script, at its first command that needs memory, after earlier ones ran.
_REFUSED_BEFORE_RUNNING = (
    redis_errors.ReadOnlyError,
    redis_errors.NoPermissionError,
    redis_errors.NoScriptError,
    redis_errors.MovedError,
    redis_errors.AskError,
    redis_errors.ClusterDownError,
    redis_errors.TryAgainError,
)


@contextmanager
def reaching(where: str, *, writing: bool = False) -> Iterator[None]:
    """Turn connection failures and refusals into StoreUnavailableError naming the (redacted) URL.

    A write that failed after it was sent may have run (a frozen Redis runs it from its socket
    buffer once it thaws; a dropped connection may drop only the reply), so the error then says
    the change may have been made. Only a write for which no connection could be made did not,
    and one Redis refused to start (out of memory, read-only replica, a cluster's redirection).
    """
    try:
        yield
    except _UNREACHABLE as exc:
        maybe_applied = writing and not never_sent(exc)
        message = f"Redis at {where} is unreachable: {exc}"
        raise StoreUnavailableError(message, maybe_applied=maybe_applied) from exc
    except redis_errors.ResponseError as exc:
        maybe_applied = writing and not isinstance(exc, _REFUSED_BEFORE_RUNNING)
        raise StoreUnavailableError(f"Redis at {where} refused: {exc}", maybe_applied=maybe_applied) from exc
