"""Resources: ``@resource`` classes, listed by ``resources/list`` and ``resources/templates/list``, read by
``resources/read``.

A ``@resource(uri="helpdesk://banner")`` class is one resource; a URI with ``{placeholders}`` (RFC 6570,
parsed and matched by the SDK's ``UriTemplate``) is a template, and each placeholder arrives as the ``read``
parameter of the same name, converted to its annotation like a tool's input. ``read`` returns text, bytes
(sent base64 as a blob) or a list of those and of the SDK's ``TextResourceContents``/``BlobResourceContents``.
A URI that no resource or template matches, or for which ``read`` raises ``ResourceNotFoundError``, gets
``-32602`` with ``data.uri`` (the specification's "resource not found").
"""

from __future__ import annotations

import base64
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.path_security import contains_path_traversal, is_absolute_path
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate
from pydantic import BaseModel, ValidationError

from ..auth import checked_scopes, refuse_without_scopes
from ..base import (
    Clock,
    ConfigurationError,
    ToolError,
    checked_flag,
    checked_icons,
    method_hints,
    page,
    parameters_model,
    validation_problems,
)
from ..completion import completers_of
from ..core import CallState, Context, ResourceOptions
from ..elicitation import InputNeeded
from ..subscriptions import Services, switched
from ..ui import MIME_TYPE, View, checked_view, declares_ui

__all__ = ["BoundResource", "ResourceContext", "ResourceNotFoundError", "ResourceSpec", "Resources", "build_resource"]

_log = logging.getLogger("mcpkit.resources")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

#: What a ``ReadResourceResult`` holds.
Contents = list[types.TextResourceContents | types.BlobResourceContents]


class ResourceContext(Context):
    """Subclass it, decorate it with ``@resource``, and write ``async def read(self, ...)``.

    ``self.uri`` is the URI being read (for a template, with its placeholders filled in); ``self.caller``,
    ``self.clock`` and plugin attributes such as ``self.remember`` are there as in a tool.
    """

    kind: ClassVar[str] = "resource"
    uri: str


class ResourceNotFoundError(Exception):
    """Raise it in ``read`` when the URI names nothing (a template's ticket that does not exist): ``-32602``."""


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One resource or template: how to match a URI to it, its parameters, and its listing."""

    cls: type[ResourceContext]
    name: str  # as listed: after a mount's prefix
    declared_name: str  # as ``@resource`` gave it: what its instances see as ``self.name``
    app_id: str
    uri: str
    template: UriTemplate | None
    mime_type: str | None
    input_model: type[BaseModel] | None
    completers: Mapping[str, str]  # template parameter -> the complete_<name> method
    wire: types.Resource | types.ResourceTemplate
    scopes: frozenset[str] = frozenset()
    enabled: bool = True
    view: View | None = None  # a ``ui://`` resource: an MCP Apps view


@dataclass(frozen=True, slots=True)
class BoundResource:
    spec: ResourceSpec
    providers: Mapping[str, Callable[[Context], object]]


def build_resource(cls: type[Any], options: ResourceOptions, app_id: str, prefix: str = "") -> ResourceSpec:
    """Check a ``@resource`` class; raise ``ConfigurationError`` naming it. ``prefix`` (a mount's) goes in front of
    its name; its URI is kept."""
    where = f"resource class {cls.__module__}.{cls.__qualname__}"
    if not (isinstance(cls, type) and issubclass(cls, ResourceContext)):
        raise ConfigurationError(f"{where} must subclass mcpkit.ResourceContext to be a resource.")
    if not isinstance(options.name, str) or not options.name.strip():
        raise ConfigurationError(f"{where}: @resource needs a name=, like name='banner'.")
    if not isinstance(options.uri, str) or not _SCHEME.match(options.uri):
        raise ConfigurationError(
            f"{where}: uri {options.uri!r} is not an absolute URI; give one with a scheme, like 'helpdesk://banner'."
        )
    read = getattr(cls, "read", None)
    if read is None or not inspect.iscoroutinefunction(read):
        raise ConfigurationError(f"{where} ({options.name!r}) needs `async def read(self, ...)`.")
    hints = method_hints(read, where)
    model, params = parameters_model(cls, read, hints, where, purpose="how the URI's value is converted")
    template: UriTemplate | None = None
    if "{" in options.uri or "}" in options.uri:  # a template, or a broken one (is_template says no to those)
        try:
            template = UriTemplate.parse(options.uri)
        except InvalidUriTemplate as exc:
            raise ConfigurationError(f"{where}: uri {options.uri!r} is not a valid URI template: {exc}") from exc
        aliased = [n for n in params if model.model_fields[n].alias not in (None, n)]
        if aliased:
            raise ConfigurationError(
                f"{where}: read() parameter {aliased[0]!r} has an alias; a placeholder is matched to the parameter's "
                "own name, so drop the alias (or name the parameter as the placeholder)."
            )
        variables = set(template.variable_names)
        if variables != set(params):
            raise ConfigurationError(
                f"{where}: the template's placeholders {sorted(variables)} and read()'s parameters {sorted(params)} "
                "differ; each placeholder is the read() parameter of the same name."
            )
    elif params:
        raise ConfigurationError(
            f"{where}: read() takes {', '.join(params)}, but uri {options.uri!r} has no placeholders; "
            "write them in the URI, like 'helpdesk://drafts/{ticket_id}', to make a template."
        )
    view = checked_view(f"{where} ({options.name!r})", options.uri, options.ui, options.mime_type, bool(template))
    mime_type = MIME_TYPE if view is not None else options.mime_type
    own_doc = cls.__dict__.get("__doc__")
    description = options.description or (inspect.cleandoc(own_doc) if isinstance(own_doc, str) else None)
    common: dict[str, Any] = {
        "name": prefix + options.name,
        "title": options.title,
        "description": description,
        "mime_type": mime_type,
        "icons": checked_icons(f"{where} ({options.name!r})", options.icons),
        "_meta": None if view is None else dict(view.meta),
    }
    wire: types.Resource | types.ResourceTemplate = (
        types.ResourceTemplate(uri_template=options.uri, **common)
        if template is not None
        else types.Resource(uri=options.uri, **common)
    )
    return ResourceSpec(
        cls=cls,
        name=prefix + options.name,
        declared_name=options.name,
        app_id=app_id,
        uri=options.uri,
        template=template,
        mime_type=mime_type,
        input_model=model if template is not None else None,
        completers=completers_of(cls, params, where),
        wire=wire,
        scopes=checked_scopes(f"{where} ({options.name!r})", options.scopes),
        enabled=checked_flag(f"{where} ({options.name!r}): enabled", options.enabled),
        view=view,
    )


def _not_found(uri: str, why: str = "") -> MCPError:
    detail = f": {why}" if why else "; list resources and templates to see what this server offers"
    return MCPError(types.INVALID_PARAMS, f"Resource not found: {uri[:200]}{detail}.", data={"uri": uri})


class Resources:
    """Serves ``resources/list``, ``resources/templates/list`` and ``resources/read`` for one server."""

    def __init__(
        self,
        bound: Sequence[BoundResource],
        clock: Callable[[], Clock],
        caller: Callable[[Any], Any],
        services: Services | None = None,
    ) -> None:
        self._services = services
        self._every = list(bound)  # declared, in order; the three maps below hold the enabled ones
        self._arrange({b.spec.name for b in bound if b.spec.enabled})
        self._clock = clock
        self._caller = caller

    def _arrange(self, on: set[str]) -> None:
        enabled = [b for b in self._every if b.spec.name in on]
        self._on = on
        self._static = {b.spec.uri: b for b in enabled if b.spec.template is None}
        self._templates = [b for b in enabled if b.spec.template is not None]
        self._by_uri = {b.spec.uri: b for b in enabled}

    def __bool__(self) -> bool:
        return bool(self._every)

    def names(self) -> tuple[str, ...]:
        return tuple(b.spec.name for b in self._every)

    def enabled_names(self) -> tuple[str, ...]:
        return tuple(b.spec.name for b in self._every if b.spec.name in self._on)

    def switch(self, names: Iterable[str], enabled: bool) -> bool:
        """Enable or disable declared resources and templates by name; whether the lists changed."""
        on = switched(self._on, names, enabled)
        if on is None:
            return False
        self._arrange(on)
        return True

    def serves(self, uri: str) -> bool:
        """Whether ``uri`` is one of the static resources or matches a template."""
        return uri in self._static or any(b.spec.template and b.spec.template.match(uri) for b in self._templates)

    def scopes_for(self, uri: str) -> frozenset[str]:
        """The scopes reading ``uri`` needs (none when nothing matches it: that is a -32602, not a 403)."""
        bound = self._static.get(uri)
        if bound is None:
            bound = next((b for b in self._templates if b.spec.template and b.spec.template.match(uri)), None)
        return bound.spec.scopes if bound is not None else frozenset()

    def views(self) -> frozenset[str]:
        """The URIs of the declared views (``ui://`` resources), enabled or not."""
        return frozenset(b.spec.uri for b in self._every if b.spec.view is not None)

    def every_scope(self) -> frozenset[str]:
        return frozenset().union(*(b.spec.scopes for b in self._every))

    def completes(self) -> bool:
        """Whether any template completes a parameter (the server then offers ``completion/complete``)."""
        return any(b.spec.completers for b in self._every)

    def bound(self, ref: str) -> BoundResource | None:
        """The resource or template declared with exactly the URI ``ref`` (completion names templates so)."""
        return self._by_uri.get(ref)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        if self._services is not None:
            self._services.list_changes.listed("resources", ctx)
        shows_views = declares_ui(ctx.session.client_capabilities)  # else views are left out, as from tools/list
        listed = [b.spec.wire for b in self._static.values() if shows_views or b.spec.view is None]
        items, cursor = page(listed, params.cursor if params else None, "resources")
        return types.ListResourcesResult(resources=items, next_cursor=cursor)  # type: ignore[arg-type]

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        if self._services is not None:
            self._services.list_changes.listed("resources", ctx)
        listed = [b.spec.wire for b in self._templates]
        items, cursor = page(listed, params.cursor if params else None, "resource templates")
        return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)  # type: ignore[arg-type]

    async def read(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        uri = str(params.uri)
        bound, arguments = self._match(uri)
        spec = bound.spec
        refuse_without_scopes(ctx, spec.scopes, f"Reading {uri[:200]}")
        state = CallState(ctx, self._services, params)
        instance = spec.cls(self._caller(ctx), self._clock(), spec.declared_name, spec.app_id, bound.providers, state)
        instance.uri = uri
        try:
            value = await instance.read(**arguments)
        except InputNeeded as needed:  # 2026-07-28: the client answers, then reads again
            return needed.result()
        except ResourceNotFoundError as exc:
            raise _not_found(uri, str(exc)) from None
        except ToolError as exc:  # written for the client (a remember error, say): sent as it is, with its code
            raise MCPError(exc.rpc_code, exc.message, data={"code": exc.code, "uri": uri}) from None
        except MCPError:
            raise
        except Exception:
            _log.exception("Reading resource %r (%s) failed", spec.name, uri)
            raise MCPError(
                types.INTERNAL_ERROR, f"Reading {uri[:200]} failed on the server; its log says why.", data={"uri": uri}
            ) from None
        return types.ReadResourceResult(contents=_contents(uri, spec, value))

    def _match(self, uri: str) -> tuple[BoundResource, dict[str, Any]]:
        bound = self._static.get(uri)
        if bound is not None:
            return bound, {}
        for candidate in self._templates:
            assert candidate.spec.template is not None
            assert candidate.spec.input_model is not None
            found = candidate.spec.template.match(uri)
            if found is None:
                continue
            for name, value in found.items():
                values = [value] if isinstance(value, str) else value
                if any("\x00" in v or contains_path_traversal(v) or is_absolute_path(v) for v in values):
                    raise _not_found(uri, f"{name} may not hold '..', a NUL or an absolute path")
            try:
                model = candidate.spec.input_model.model_validate(found)
            except ValidationError as exc:
                problems = "; ".join(validation_problems(exc))
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"{uri[:200]} matches {candidate.spec.uri}, but {problems}.",
                    data={"uri": uri},
                ) from None
            return candidate, dict(model)
        raise _not_found(uri)


def _contents(uri: str, spec: ResourceSpec, value: object) -> Contents:
    """``read``'s result as the contents of a ``ReadResourceResult`` (-32603 for anything else, logged)."""
    items = value if isinstance(value, list | tuple) else [value]
    meta = None if spec.view is None else dict(spec.view.meta)  # a view's sandbox travels with its HTML
    contents: Contents = []
    for item in items:
        if isinstance(item, types.TextResourceContents | types.BlobResourceContents):
            contents.append(item)
        elif isinstance(item, str):
            mime_type = spec.mime_type or "text/plain"
            contents.append(types.TextResourceContents(uri=uri, mime_type=mime_type, text=item, _meta=meta))
        elif isinstance(item, bytes | bytearray | memoryview):
            blob = base64.b64encode(bytes(item)).decode("ascii")
            contents.append(
                types.BlobResourceContents(
                    uri=uri, mime_type=spec.mime_type or "application/octet-stream", blob=blob, _meta=meta
                )
            )
        else:
            _log.error("Resource %r read() returned %s, not str, bytes or resource contents", spec.name, type(item))
            raise MCPError(
                types.INTERNAL_ERROR, f"Reading {uri[:200]} failed on the server; its log says why.", data={"uri": uri}
            )
    return contents
