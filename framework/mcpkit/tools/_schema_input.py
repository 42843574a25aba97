"""Hand-written input schemas: ``@tool(input_schema={...})``, advertised verbatim and checked with ``jsonschema``.

mcpkit derives a tool's ``inputSchema`` from ``execute``'s parameters with pydantic; a tool that needs what
pydantic does not write (a top-level ``$schema``, ``allOf``/``anyOf`` compositions, ``if``/``then``/``else``)
gives a JSON Schema 2020-12 document instead. It is checked against the metaschema when the server is built,
sent to clients exactly as written, and every call's arguments are validated against it (``jsonschema``'s
``Draft202012Validator``, formats checked) before ``execute`` runs; the arguments then arrive as they were
sent, JSON values without conversion.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from ..base import ConfigurationError
from ._schema_shape import MAX_SCHEMA_DEPTH, outside_refs, too_deep

__all__ = ["SchemaInput", "SchemaInputError", "schema_input"]

#: Problems listed in one INVALID_INPUT message at most, and how much of each.
MAX_PROBLEMS = 10
_MESSAGE_CHARS = 200


class SchemaInputError(Exception):
    """The arguments do not satisfy the tool's schema; ``problems`` name the path and the rule of each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class SchemaInput:
    """Stands where a tool's pydantic input model stands: ``model_validate(arguments)`` checks and passes them."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        from jsonschema import Draft202012Validator, FormatChecker  # ~35 ms: only servers with such a tool pay it

        self._validator = Draft202012Validator(schema, format_checker=FormatChecker())

    def model_validate(self, arguments: Mapping[str, Any]) -> SimpleNamespace:
        errors = sorted(self._validator.iter_errors(dict(arguments)), key=lambda error: list(error.absolute_path))
        if errors:
            raise SchemaInputError([_problem(error) for error in errors[:MAX_PROBLEMS]])
        return SimpleNamespace(**arguments)  # its __dict__ is what execute() is called with


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.absolute_path) or "(arguments)"
    message = error.message if len(error.message) <= _MESSAGE_CHARS else error.message[:_MESSAGE_CHARS] + "..."
    return f"{where}: {message} (rule: {error.validator})"


def schema_input(
    schema: object, execute: Callable[..., Any], where: str, *, leading: int = 1
) -> tuple[SchemaInput, tuple[str, ...], dict[str, Any]]:
    """Check a hand-written schema and ``execute``'s parameters (after the ``leading`` ones that are not inputs)
    against it; raise ConfigurationError naming both.

    Returns the input checker, the parameters ``execute`` names, and a copy of the schema to advertise.
    """
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ConfigurationError(
            f'{where}: input_schema is a JSON Schema object with "type": "object" (MCP tool inputs are objects), '
            f"not {schema!r:.60}."
        )
    _check_shape(schema, where)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ConfigurationError(
            f"{where}: input_schema is not a valid JSON Schema 2020-12 document: {exc.message}"
        ) from exc
    parameters = list(inspect.signature(execute).parameters.values())[leading:]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    named = [p.name for p in parameters if p.kind is not p.VAR_KEYWORD]
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        properties = {}
    missing = [name for name in named if name not in properties]
    if missing:
        raise ConfigurationError(
            f"{where}: {execute.__name__}() takes {', '.join(missing)}, which input_schema's properties do not name."
        )
    unnamed = [name for name in properties if name not in named]
    if not takes_any and (unnamed or schema.get("additionalProperties", True) is not False):
        what = f"the properties {', '.join(unnamed)}" if unnamed else "properties it does not list"
        raise ConfigurationError(
            f"{where}: input_schema allows {what}, which {execute.__name__}() could not receive: "
            "take **arguments, or name every property and set additionalProperties to false."
        )
    return SchemaInput(schema), tuple(named), copy.deepcopy(dict(schema))


def _check_shape(schema: Mapping[str, Any], where: str) -> None:
    """Refuse what ``jsonschema`` would fail on later: nesting past its stack, a ``$ref`` it cannot resolve."""
    deep = too_deep(schema, "input_schema")
    if deep is not None:
        shown = deep if len(deep) <= 100 else f"{deep[:48]}...{deep[-48:]}"
        raise ConfigurationError(
            f"{where}: input_schema nests deeper than {MAX_SCHEMA_DEPTH} levels (at {shown}): move repeated parts "
            "under $defs and $ref them."
        )
    outside = outside_refs(schema, "input_schema")
    if outside:
        first = outside[0]
        raise ConfigurationError(
            f"{where}: input_schema's $ref {first.node['$ref']!r} at {first.path} points outside the document, "
            "which neither mcpkit (every call would fail) nor clients fetch: put the definition under $defs and "
            "$ref it as '#/$defs/NAME'."
        )
