"""The MCP Inspector's ``--strict`` schema lint, in Python: what a strict client says of a tool's JSON schemas.

``mcpkit inspect`` reports these findings (an error fails it), and the tests hold mcpkit's own tools to them. A
port of ``core/json/schemaLint.ts`` of @modelcontextprotocol/inspector 2.12.0 (``npx
@modelcontextprotocol/inspector@2.12.0 --cli URL --method tools/list --strict``), its four rules as written
there: a bare ``true``/``false`` where a schema object is expected (error), ``type`` as an array (warning: split
it into ``anyOf`` branches), a ``$ref`` outside the document (warning), and a schema with no validation keyword
at all, which accepts any value (warning, "untyped-schema"). It walks every subschema, ``$defs`` included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Finding", "lint_tool"]

_BOOLEAN_VALUED = {"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
_ONE = [
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
_LIST = ["allOf", "anyOf", "oneOf", "prefixItems"]
_MAP = ["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"]
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
}


def lint_tool(input_schema: Mapping[str, Any] | None, output_schema: Mapping[str, Any] | None) -> list[Finding]:
    """Every finding on a tool's schemas; an empty list is what ``--strict`` passes without a word."""
    findings: list[Finding] = []
    for name, schema in (("inputSchema", input_schema), ("outputSchema", output_schema)):
        if schema is not None:
            _walk(schema, name, None, findings)
    return findings


def _walk(node: Any, path: str, keyword: str | None, findings: list[Finding]) -> None:
    if isinstance(node, bool):
        if keyword not in _BOOLEAN_VALUED:
            findings.append(Finding("boolean-schema", "error", path))
        return
    if not isinstance(node, Mapping):
        return
    kind = node.get("type")
    if isinstance(kind, list) and kind and set(kind) <= _TYPES and len(set(kind)) == len(kind):
        findings.append(Finding("type-union", "warning", path))
    ref = node.get("$ref")
    if isinstance(ref, str) and ref and not ref.startswith("#"):
        findings.append(Finding("remote-ref", "warning", path))
    constrains = any(key in _CONSTRAINING for key in node) or ("if" in node and ("then" in node or "else" in node))
    if not constrains and keyword != "not":
        findings.append(Finding("untyped-schema", "warning", path))
    for key in _MAP:
        if isinstance(node.get(key), Mapping):
            for name, child in node[key].items():
                _walk(child, f"{path}.{key}.{name}", key, findings)
    for key in _LIST:
        if isinstance(node.get(key), list):
            for index, child in enumerate(node[key]):
                _walk(child, f"{path}.{key}[{index}]", key, findings)
    for key in _ONE:
        if key == "items" and isinstance(node.get(key), list):  # the older tuple form of prefixItems
            for index, child in enumerate(node[key]):
                _walk(child, f"{path}.items[{index}]", key, findings)
        elif key in node:
            _walk(node[key], f"{path}.{key}", key, findings)
