"""The MCP Inspector's ``--strict`` schema lint, in Python: what a strict client says of a tool's JSON schemas.

``mcpkit inspect`` reports these findings (an error fails it), and the tests hold mcpkit's own tools to them. A
port of ``core/json/schemaLint.ts`` of @modelcontextprotocol/inspector 2.12.0 (``npx
@modelcontextprotocol/inspector@2.12.0 --cli URL --method tools/list --strict``), its four rules as written
there: a bare ``true``/``false`` where a schema object is expected (error), ``type`` as an array (warning: split
it into ``anyOf`` branches), a ``$ref`` outside the document (warning), and a schema with no validation keyword
at all, which accepts any value (warning, "untyped-schema"). It walks every subschema, ``$defs`` included, with
the walk the server checks hand-written schemas with (``_schema_shape``): a ``$ref`` that a ``$id`` of the
document names is inside it, and a schema deeper than the server builds is an error ("deep-schema").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ._schema_shape import MAX_SCHEMA_DEPTH, Subschema, outside_refs, subschemas

__all__ = ["Finding", "lint_tool"]

_BOOLEAN_VALUED = {"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
_CONSTRAINING = {
    *("type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"),
    *("maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema"),
    *("maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties"),
    *("required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains"),
    *("additionalItems", "unevaluatedItems", "properties", "patternProperties", "additionalProperties"),
    *("unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef"),
    "$recursiveRef",
}
_TYPES = {"null", "boolean", "object", "array", "number", "string", "integer"}


class Finding(NamedTuple):
    """One finding, as the Inspector reports it: its rule, severity and where (``inputSchema.properties.value``)."""

    rule: str
    severity: str
    path: str

    @property
    def advice(self) -> str:
        """What is wrong, for a reader, and what to write instead."""
        return _ADVICE[self.rule]


_ADVICE = {
    "boolean-schema": "is a bare true/false where a schema object is expected, which strict clients refuse: write "
    'an object ({} accepts anything, {"not": {}} nothing)',
    "type-union": "gives `type` as a list, which some clients cannot show or fill in: use anyOf with one type per "
    "branch (pydantic writes that for `str | None`)",
    "remote-ref": "points `$ref` outside the document, which clients do not fetch: put the definition under $defs",
    "untyped-schema": "accepts any value (no type or other rule), so a model is told nothing about it: annotate the "
    "parameter with a type other than Any, or give the schema a type",
    "deep-schema": f"nests deeper than {MAX_SCHEMA_DEPTH} levels, which a Server refuses to build with: move repeated "
    "parts under $defs and $ref them",
}


def lint_tool(input_schema: Mapping[str, Any] | None, output_schema: Mapping[str, Any] | None) -> list[Finding]:
    """Every finding on a tool's schemas; an empty list is what ``--strict`` passes without a word."""
    findings: list[Finding] = []
    for name, schema in (("inputSchema", input_schema), ("outputSchema", output_schema)):
        if schema is None:
            continue
        outside = {sub.path for sub in outside_refs(schema, name)}
        for sub in subschemas(schema, name):
            if sub.depth > MAX_SCHEMA_DEPTH:
                findings.append(Finding("deep-schema", "error", sub.path))
                break
            _check(sub, sub.path in outside, findings)
    return findings


def _check(sub: Subschema, outside: bool, findings: list[Finding]) -> None:
    node, path = sub.node, sub.path
    if isinstance(node, bool):
        if sub.keyword not in _BOOLEAN_VALUED:
            findings.append(Finding("boolean-schema", "error", path))
        return
    if not isinstance(node, Mapping):
        return
    kind = node.get("type")
    if isinstance(kind, list) and kind and set(kind) <= _TYPES and len(set(kind)) == len(kind):
        findings.append(Finding("type-union", "warning", path))
    if outside:
        findings.append(Finding("remote-ref", "warning", path))
    constrains = any(key in _CONSTRAINING for key in node) or ("if" in node and ("then" in node or "else" in node))
    if not constrains and sub.keyword != "not":
        findings.append(Finding("untyped-schema", "warning", path))
