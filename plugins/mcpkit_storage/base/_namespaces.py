"""Namespaces: the families of buckets a plugin keeps apart (its own prefix, like ``notes.``), registered by the
plugin so that storage knows which are always searchable and how a log line names a bucket, naming no plugin."""

from __future__ import annotations

__all__ = ["indexed_namespaces", "register_namespace", "without_namespace"]

#: The registered prefixes, in the order they were registered, and whether each is always indexed for search.
_NAMESPACES: dict[str, bool] = {}
#: The always-indexed prefixes, kept as a tuple for ``str.startswith``.
_INDEXED: tuple[str, ...] = ()


def register_namespace(prefix: str, *, indexed: bool = False) -> str:
    """Make ``prefix`` (ending in ``.``) a namespace; ``indexed``: its values are always indexed for search."""
    global _INDEXED
    if not prefix.endswith(".") or prefix.count(".") != 1:
        raise ValueError(f"A namespace is one word and a dot, like 'notes.': {prefix!r} is not.")
    if _NAMESPACES.setdefault(prefix, indexed) != indexed:
        raise ValueError(f"The namespace {prefix!r} is registered already, {'' if not indexed else 'not '}indexed.")
    _INDEXED = tuple(name for name, always in _NAMESPACES.items() if always)
    return prefix


def indexed_namespaces() -> tuple[str, ...]:
    """The prefixes of buckets whose values are always indexed for search."""
    return _INDEXED


def without_namespace(bucket: str) -> str:
    """``bucket`` without its registered namespace (``notes.user`` is ``user``), as log lines name scopes."""
    namespace, dot, rest = bucket.partition(".")
    return rest if dot and namespace + dot in _NAMESPACES else bucket
