"""A JSON schema's shape, as the server checks it when it is built and the lint reads it: every subschema with its
path, how deep it nests, and whether a ``$ref`` stays inside the document (``$id`` taken into account).

One walk for both, so that ``Server(...)`` and ``mcpkit inspect`` give the same verdict on the same schema. It is
iterative: a schema nested deeper than ``MAX_SCHEMA_DEPTH`` is refused by name, never a ``RecursionError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple
from urllib.parse import urldefrag, urljoin

__all__ = ["MAX_SCHEMA_DEPTH", "Subschema", "outside_refs", "subschemas", "too_deep"]

#: How many subschemas deep a schema may nest (``properties.a.properties.b`` is 2). Far beyond what a tool's
#: arguments need, and well within what ``jsonschema`` checks without running out of Python's stack (about 90).
MAX_SCHEMA_DEPTH = 64

#: Keywords holding one subschema, a list of them, or a map of names to them (JSON Schema 2020-12 and earlier).
ONE = [
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
]
LIST = ["allOf", "anyOf", "oneOf", "prefixItems"]
MAP = ["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"]


class Subschema(NamedTuple):
    """One subschema: where it is (``inputSchema.properties.value``), the keyword it is under, itself, its depth
    (0 for the root) and the base URI its ``$ref`` resolves against (from the ``$id`` around it)."""

    path: str
    keyword: str | None
    node: Any
    depth: int
    base: str


def subschemas(schema: Any, path: str) -> Iterator[Subschema]:
    """Every subschema of ``schema``, the root first, in document order; none deeper than ``MAX_SCHEMA_DEPTH + 1``."""
    stack = [Subschema(path, None, schema, 0, "")]
    while stack:
        here = stack.pop()
        base = here.base
        if isinstance(here.node, Mapping) and isinstance(here.node.get("$id"), str):
            base = urljoin(base, here.node["$id"])
            here = here._replace(base=base)
        yield here
        if not isinstance(here.node, Mapping) or here.depth > MAX_SCHEMA_DEPTH:
            continue
        stack.extend(reversed(list(_children(here.node, here.path, here.depth + 1, base))))


def _children(node: Mapping[str, Any], path: str, depth: int, base: str) -> Iterator[Subschema]:
    for key in MAP:
        if isinstance(node.get(key), Mapping):
            for name, child in node[key].items():
                yield Subschema(f"{path}.{key}.{name}", key, child, depth, base)
    for key in LIST:
        if isinstance(node.get(key), list):
            for index, child in enumerate(node[key]):
                yield Subschema(f"{path}.{key}[{index}]", key, child, depth, base)
    for key in ONE:
        if key == "items" and isinstance(node.get(key), list):  # the older tuple form of prefixItems
            for index, child in enumerate(node[key]):
                yield Subschema(f"{path}.items[{index}]", key, child, depth, base)
        elif key in node:
            yield Subschema(f"{path}.{key}", key, node[key], depth, base)


def too_deep(schema: Any, path: str) -> str | None:
    """The path of the first subschema nested deeper than ``MAX_SCHEMA_DEPTH``, or None."""
    return next((sub.path for sub in subschemas(schema, path) if sub.depth > MAX_SCHEMA_DEPTH), None)


def outside_refs(schema: Any, path: str) -> list[Subschema]:
    """The subschemas whose ``$ref`` points outside the document: not ``#...``, nor a URI one of its ``$id`` names."""
    found = list(subschemas(schema, path))
    ids = {urldefrag(sub.base).url for sub in found if sub.base}
    return [
        sub
        for sub in found
        if isinstance(sub.node, Mapping)
        and isinstance(ref := sub.node.get("$ref"), str)
        and ref
        and not ref.startswith("#")
        and urldefrag(urljoin(sub.base, ref)).url not in ids
    ]
