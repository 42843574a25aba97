"""A method's parameters as a pydantic model: tools' ``execute``, resource templates' ``read``, prompts' ``render``.

Each parameter needs a type annotation (it becomes the schema, or the conversion of a URI's or a prompt's
string values); ``*args``, ``**kwargs``, positional-only and ``_``-prefixed names are refused when the
server is built, with an error naming the class and the parameter.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ._errors import ConfigurationError

__all__ = ["method_hints", "parameters_model", "validation_problems"]


def method_hints(method: Callable[..., Any], where: str) -> dict[str, Any]:
    """``typing.get_type_hints`` of ``method`` (with ``Annotated`` kept), or a ConfigurationError naming ``where``."""
    try:
        return typing.get_type_hints(method, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"{where}: cannot resolve the annotations of {method.__name__}(): {exc}") from exc


def parameters_model(
    cls: type[Any],
    method: Callable[..., Any],
    hints: Mapping[str, Any],
    where: str,
    *,
    purpose: str,
    leading: int = 1,
) -> tuple[type[BaseModel], tuple[str, ...]]:
    """The model of ``method``'s parameters after the ``leading`` ones that are not inputs (``self``; a function
    tool's context, or none), extra fields forbidden, and their names, in order.

    ``purpose`` ends the missing-annotation error: what the annotation becomes (say "the input schema").
    """
    name = f"{method.__name__}()"
    fields: dict[str, Any] = {}
    for index, param in enumerate(inspect.signature(method).parameters.values()):
        if index < leading:
            continue  # self, or a function tool's context
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigurationError(f"{where}: {name} cannot take *{param.name}; name each input parameter.")
        if param.kind is param.POSITIONAL_ONLY:
            raise ConfigurationError(f"{where}: {name} parameter {param.name!r} cannot be positional-only.")
        if param.name.startswith("_"):
            raise ConfigurationError(
                f"{where}: {name} parameter {param.name!r} starts with '_'; "
                "give it a plain name (use Field(alias=...) for a different wire name)."
            )
        if hasattr(BaseModel, param.name):
            raise ConfigurationError(
                f"{where}: {name} parameter {param.name!r} is a name pydantic reserves; rename it and keep the "
                f"wire name with Annotated[..., Field(alias={param.name!r})]."
            )
        if param.name not in hints:
            raise ConfigurationError(
                f"{where}: {name} parameter {param.name!r} needs a type annotation; it becomes {purpose}."
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], default)
    try:
        model = create_model(f"{cls.__name__}Input", __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as exc:
        raise ConfigurationError(f"{where}: {name}'s parameters do not make a valid input model: {exc}") from exc
    return model, tuple(fields)


def validation_problems(exc: ValidationError) -> list[str]:
    """``path: message`` for each problem pydantic found (``(arguments)`` for the whole), never the input itself."""
    return [
        f"{'.'.join(str(part) for part in error['loc']) or '(arguments)'}: {error['msg']}"
        for error in exc.errors(include_url=False, include_input=False)
    ]
