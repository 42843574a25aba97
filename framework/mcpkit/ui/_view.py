"""A ``ui://`` resource checked as an MCP Apps view: one fixed URI, served as ``text/html;profile=mcp-app``, with the
sandbox ``UiResource`` describes as ``_meta.ui`` (CSP origins, browser permissions, dedicated domain, border)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import ConfigurationError
from ..core import UiResource
from ._negotiation import MIME_TYPE

__all__ = ["View", "checked_view"]

#: An origin a host may write into a CSP directive: a scheme, a host (``*.`` allowed in front) and maybe a port;
#: nothing a directive would read as another source or directive (spaces, ``;``, ``,``, quotes).
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$")
#: ``UiResource`` field -> its key under ``_meta.ui.csp``.
_CSP = {
    "connect_domains": "connectDomains",
    "resource_domains": "resourceDomains",
    "frame_domains": "frameDomains",
    "base_uri_domains": "baseUriDomains",
}
#: ``UiResource(permissions=...)`` value (the Permissions Policy feature) -> its key under ``_meta.ui.permissions``.
_PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboard-write": "clipboardWrite",
}


@dataclass(frozen=True, slots=True)
class View:
    """A view, checked: what its listing and its contents carry as ``_meta``."""

    uri: str
    meta: Mapping[str, Any]


def checked_view(where: str, uri: str, ui: object, mime_type: str | None, template: bool) -> View | None:
    """The view a ``@resource`` declares (None when its URI is not ``ui://``), or a ``ConfigurationError`` naming
    ``where`` and what to change."""
    if not uri.startswith("ui://"):
        if ui is not None:
            raise ConfigurationError(
                f"{where}: ui= makes a resource an MCP Apps view, whose URI starts with 'ui://'; {uri!r:.80} does not "
                "(write it like 'ui://helpdesk/draft', or drop ui=)."
            )
        return None
    if template:
        raise ConfigurationError(
            f"{where}: view {uri!r:.80} is a URI template; a view has one fixed URI, which its tools name "
            "(pass what varies as the tool's result)."
        )
    if mime_type is not None and mime_type != MIME_TYPE:
        raise ConfigurationError(
            f"{where}: view {uri!r:.80} is served as {MIME_TYPE!r}, not {mime_type!r:.60}; drop mime_type=."
        )
    ui = UiResource() if ui is None else ui
    if not isinstance(ui, UiResource):
        raise ConfigurationError(f"{where}: ui is an mcpkit.UiResource, like UiResource(prefers_border=True).")
    shown: dict[str, Any] = {}
    csp = {key: _origins(where, field, getattr(ui, field)) for field, key in _CSP.items()}
    if any(csp.values()):
        shown["csp"] = {key: origins for key, origins in csp.items() if origins}
    permissions = _permissions(where, ui.permissions)
    if permissions:
        shown["permissions"] = permissions
    if ui.domain is not None:
        if not isinstance(ui.domain, str) or not ui.domain.strip() or any(c.isspace() for c in ui.domain):
            raise ConfigurationError(
                f"{where}: UiResource(domain={ui.domain!r:.60}) is a host name, in the form the host documents."
            )
        shown["domain"] = ui.domain
    if ui.prefers_border is not None:
        if not isinstance(ui.prefers_border, bool):
            raise ConfigurationError(f"{where}: UiResource(prefers_border=...) is True, False or None.")
        shown["prefersBorder"] = ui.prefers_border
    return View(uri, {"ui": shown})


def _origins(where: str, field: str, given: object) -> list[str]:
    if isinstance(given, str) or not isinstance(given, list | tuple):
        raise ConfigurationError(
            f"{where}: UiResource({field}=...) is a list of origins, like ['https://api.example.com'], "
            f"not {given!r:.60}."
        )
    for origin in given:
        if not isinstance(origin, str) or not _ORIGIN.match(origin):
            raise ConfigurationError(
                f"{where}: UiResource({field}=...) holds {origin!r:.80}, which is not an origin; write "
                "scheme://host[:port], like 'https://api.example.com' or 'https://*.example.com'."
            )
    return list(given)


def _permissions(where: str, given: object) -> dict[str, dict[str, Any]]:
    if isinstance(given, str) or not isinstance(given, list | tuple):
        raise ConfigurationError(
            f"{where}: UiResource(permissions=...) is a list, like ['clipboard-write'], not {given!r:.60}."
        )
    unknown = [feature for feature in given if feature not in _PERMISSIONS]
    if unknown:
        raise ConfigurationError(
            f"{where}: UiResource(permissions=...) holds {unknown[0]!r:.40}; a view may ask for "
            f"{', '.join(repr(name) for name in _PERMISSIONS)} (the host decides whether to grant them)."
        )
    return {_PERMISSIONS[feature]: {} for feature in given}
