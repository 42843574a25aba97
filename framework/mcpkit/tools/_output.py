"""How a tool's return value becomes an MCP result, decided once from the return annotation."""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import types as types_module
import typing
from typing import Any

import mcp_types as types
import pydantic_core
from pydantic import BaseModel, TypeAdapter
from typing_extensions import is_typeddict

__all__ = ["Output", "output_for", "text_result"]


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _structured(value: dict[str, Any]) -> types.CallToolResult:
    text = pydantic_core.to_json(value).decode()
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=value)


class Output:
    """Converts return values for one tool; ``schema`` is its ``outputSchema`` (or None)."""

    schema: dict[str, Any] | None = None

    def convert(self, value: Any) -> types.CallToolResult:
        """Return values without a declared shape: dicts are structured, strings are text, the rest JSON."""
        if isinstance(value, types.CallToolResult):
            return value
        if isinstance(value, str):
            return text_result(value)
        if value is None:
            return types.CallToolResult(content=[])
        if isinstance(value, BaseModel):
            return _structured(value.model_dump(mode="json", by_alias=True))
        jsonable = pydantic_core.to_jsonable_python(value)
        if isinstance(jsonable, dict):
            return _structured(jsonable)
        return text_result(pydantic_core.to_json(jsonable).decode())


class _Typed(Output):
    """A declared object shape (pydantic model, TypedDict, dataclass): validated, with an outputSchema."""

    def __init__(self, annotation: Any) -> None:
        self._adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        self._model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        schema = self._adapter.json_schema(mode="serialization", by_alias=True)
        if schema.get("type") != "object":
            raise TypeError(f"{annotation!r} does not describe a JSON object")
        self.schema = schema

    def convert(self, value: Any) -> types.CallToolResult:
        if isinstance(value, types.CallToolResult):
            return value
        if self._model is not None and isinstance(value, self._model):
            return _structured(value.model_dump(mode="json", by_alias=True))
        checked = self._adapter.validate_python(value)
        return _structured(self._adapter.dump_python(checked, mode="json", by_alias=True))


class _Wrapped(Output):
    """A declared shape that is not an object (a list, a number, a boolean, a literal): sent as ``{"result": ...}``.

    ``structuredContent`` must be a JSON object, so the value travels under ``result``; the ``outputSchema`` says
    so, and the text block carries the value's own JSON, as for an undeclared list or number.
    """

    def __init__(self, annotation: Any) -> None:
        self._adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        inner = self._adapter.json_schema(mode="serialization", by_alias=True)
        definitions = inner.pop("$defs", None)  # "#/$defs/..." references stay valid at the wrapper's root
        schema: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
        if definitions:
            schema["$defs"] = definitions
        self.schema = schema

    def convert(self, value: Any) -> types.CallToolResult:
        if isinstance(value, types.CallToolResult):
            return value
        dumped = self._adapter.dump_python(self._adapter.validate_python(value), mode="json", by_alias=True)
        text = pydantic_core.to_json(dumped).decode()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content={"result": dumped}
        )


#: Annotations whose results are decided per value (a ``str`` is the tutorial's text, a ``dict`` an object).
_PER_VALUE = (str, dict, types.CallToolResult, type(None))


def _declares_non_object(annotation: Any) -> bool:
    """Whether an annotation is a shape of its own that is not an object: ``list[...]``, ``int``, ``bool``, ..."""
    if annotation is None:
        return False
    members = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    for member in members:
        origin = typing.get_origin(member) or member
        if _object_shape(member):  # ``Model | None`` keeps the model's own structuredContent, as an undeclared value
            return False
        if member is Any or (isinstance(origin, type) and issubclass(origin, _PER_VALUE)):
            if member is not type(None):
                return False
        elif origin in (collections.abc.Mapping, collections.abc.MutableMapping):
            return False
    return any(member is not type(None) for member in members)


def _object_shape(annotation: Any) -> bool:
    return (
        isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation))
    ) or (is_typeddict(annotation))


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types_module.UnionType)


def output_for(annotation: Any) -> Output:
    """Pick the conversion for a return annotation (``inspect.Signature.empty`` when there is none)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation is inspect.Signature.empty or annotation is Any:
        return Output()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _Typed(annotation)
    if is_typeddict(annotation) or (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
        return _Typed(annotation)
    if _declares_non_object(annotation):
        return _Wrapped(annotation)
    # dict, Mapping, str, None, CallToolResult, Any, and unions with any of them: decided per value.
    return Output()
