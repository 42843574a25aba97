"""``RememberOptions``: what ``RememberPlugin`` takes besides its store, written once, with defaults and checks."""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from mcpkit import ConfigurationError, checked_flag, checked_optional_whole, checked_whole
from mcpkit_search import Embedder
from mcpkit_storage import DEFAULT_MIN_SIMILARITY, MAX_TTL

from ._tools_config import ToolsConfig

__all__ = [
    "DEFAULT_HISTORY",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_VALUES",
    "DEFAULT_MAX_VALUE_BYTES",
    "DEFAULT_SESSION_TTL",
    "SEALING_OVERHEAD_BYTES",
    "RememberKeywords",
    "RememberOptions",
]

#: The largest value kept by default (as compact JSON).
DEFAULT_MAX_VALUE_BYTES = 64 * 1024

#: What sealing adds to a value at most: header, nonce, tag, deadline, write time, identity, bucket and key.
SEALING_OVERHEAD_BYTES = 2048

#: Default quotas: what one caller may keep in one scope (global scope: every caller together).
DEFAULT_MAX_VALUES = 10_000
DEFAULT_MAX_BYTES = 16 * 1024 * 1024

#: Default number of versions each key's change history keeps: a few. ``history=0`` turns it off: a history makes each
#: set a read-modify-write of one more entry, which counts against the quotas (docs/architecture.md, "Provenance and
#: change history").
DEFAULT_HISTORY = 3

#: Default longest life of a value kept for a session, after its last write (the session is gone by then).
DEFAULT_SESSION_TTL = 86_400.0


class RememberKeywords(TypedDict, total=False):
    """The keywords of ``RememberPlugin(...)`` and ``RememberPlugin.init(...)``: ``RememberOptions``' fields."""

    default_ttl: float | None
    secret: str | Sequence[str] | None
    max_value_bytes: int
    max_values: int | None
    max_bytes: int | None
    session_ttl: float | None
    tools: ToolsConfig | Mapping[str, Any] | None
    redis_prefix: str
    search: bool
    embedder: Embedder | None
    search_keys: bool
    history: int


@dataclass(frozen=True, kw_only=True)
class RememberOptions:
    """The plugin's options, checked when made: a wrong one is a ``ConfigurationError`` naming it (docs/remember.md)."""

    #: Seconds a value written without a ``ttl`` lives; None: until forgotten.
    default_ttl: float | None = None
    #: The sealing secret, or several (the first encrypts, the others are still read during a rotation); None:
    #: ``REMEMBER_SECRET``, comma-separated.
    secret: str | Sequence[str] | None = None
    #: The largest value, as compact JSON.
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES
    #: What one caller keeps in one scope, in values and in bytes (None: no limit).
    max_values: int | None = DEFAULT_MAX_VALUES
    max_bytes: int | None = DEFAULT_MAX_BYTES
    #: The longest a value kept for a session lives after its last write.
    session_ttl: float | None = DEFAULT_SESSION_TTL
    #: The model-facing memory tools (``ToolsConfig``).
    tools: ToolsConfig | Mapping[str, Any] | None = None
    redis_prefix: str = "mcpkit:remember:"
    #: Index every value for ``self.remember.search`` (the memory tools' notes are always indexed).
    search: bool = False
    #: With one (``mcpkit_search.MiniLM()``), searchable values keep sealed vectors and search is hybrid.
    embedder: Embedder | None = None
    #: False leaves keys out of what is searched (keys that are ids, not words), for values written from then on.
    search_keys: bool = True
    #: How many versions of each key its change history keeps, with their provenance and event (0: none).
    history: int = DEFAULT_HISTORY

    def __post_init__(self) -> None:
        checked_flag("search", self.search)
        checked_flag("search_keys", self.search_keys)
        _checked_embedder(self.embedder)
        object.__setattr__(self, "default_ttl", _seconds("default_ttl", self.default_ttl))
        object.__setattr__(self, "session_ttl", _seconds("session_ttl", self.session_ttl))
        max_value_bytes, max_bytes = self.max_value_bytes, self.max_bytes
        checked_whole("max_value_bytes", max_value_bytes, unit="bytes")
        checked_whole("history", self.history, least=0, most=100)
        checked_optional_whole("max_values", self.max_values)
        checked_optional_whole("max_bytes", max_bytes, unit="bytes")
        if max_bytes is not None and max_bytes < max_value_bytes + SEALING_OVERHEAD_BYTES:
            raise ConfigurationError(
                f"max_bytes ({max_bytes:,}) leaves no room for a value of max_value_bytes ({max_value_bytes:,}) once "
                f"sealed (up to {SEALING_OVERHEAD_BYTES:,} bytes more, with its key and identity): raise max_bytes "
                "or lower max_value_bytes."
            )

    @property
    def secrets(self) -> list[str] | None:
        """``secret`` as a list (the first encrypts, the others are still read), or None: ``REMEMBER_SECRET``."""
        secret = self.secret
        return [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)


def _checked_embedder(embedder: object) -> None:
    """Nothing when the embedder has a string ``name`` and an async ``embed`` and numpy is there; else why not."""
    if embedder is None:
        return
    if not isinstance(embedder, Embedder) or not inspect.iscoroutinefunction(embedder.embed):
        raise ConfigurationError(
            f"embedder is an object with a `name` and an `async def embed(self, texts)` returning one vector per "
            f"text (mcpkit_search.Embedder), for example mcpkit_search.MiniLM(); not {embedder!r:.60}."
        )
    load = getattr(embedder, "load", None)
    if load is not None and not inspect.iscoroutinefunction(load):
        raise ConfigurationError(f"the embedder's load is `async def load(self) -> None`, not {load!r:.60}.")
    threshold = getattr(embedder, "min_similarity", DEFAULT_MIN_SIMILARITY)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not -1.0 <= threshold < 1.0:
        raise ConfigurationError(
            "the embedder's min_similarity is the cosine similarity above which a value matches a query by "
            f"meaning, a number from -1 up to (not including) 1; not {threshold!r:.60}."
        )
    concurrency = getattr(embedder, "concurrency", 1)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(
            "the embedder's concurrency is how many of its embed calls may run at once, a whole number from 1 "
            f"(default 1: a local model uses every core for one); not {concurrency!r:.60}."
        )
    if not isinstance(embedder.name, str) or not embedder.name:
        raise ConfigurationError(
            f"the embedder's name is a non-empty string naming its model, not {embedder.name!r:.60}."
        )
    if importlib.util.find_spec("numpy") is None:
        raise ConfigurationError("An embedder needs numpy for its vectors: pip install 'mcpkit[semantic]' (or numpy).")


def _seconds(name: str, value: object) -> float | None:
    """A number of seconds in (0, MAX_TTL], or None; anything else is a ConfigurationError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TTL:
        raise ConfigurationError(
            f"{name} is a number of seconds above 0 and at most {MAX_TTL:,} (100 years), or None; not {value!r:.40}."
        )
    return float(value)
