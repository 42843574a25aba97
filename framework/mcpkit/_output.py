"""How a tool's return value becomes an MCP result, decided once from the return annotation."""

from __future__ import annotations

import dataclasses
import inspect
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
    # dict, Mapping, str, None, CallToolResult, lists, unions: decided per value.
    return Output()
