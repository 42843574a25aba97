"""Icons for tools, resources, prompts and the server (``icons=[...]``), checked when the server is built.

An icon is an ``mcp_types.Icon`` or a mapping with ``src`` and optionally ``mime_type`` (or ``mimeType``),
``sizes`` (``["48x48", "any"]``) and ``theme`` (``"light"`` or ``"dark"``). Its ``src`` is an ``https://`` URL or a
``data:image/...`` URI: the spec tells clients to refuse other schemes, so an icon that would not show is refused
here instead, naming the class.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

import mcp_types as types

from ._errors import ConfigurationError

__all__ = ["checked_icons"]

_SIZE = re.compile(r"^(any|[1-9][0-9]{0,4}x[1-9][0-9]{0,4})$")
_KEYS = {"src", "mime_type", "mimeType", "sizes", "theme"}
#: A server names a handful of icons; a data: URI beyond this belongs on a web server, not in every list.
MAX_ICONS = 8
MAX_SRC_CHARS = 64 * 1024


def checked_icons(where: str, value: object) -> list[types.Icon] | None:
    """``value`` as wire icons, or None when there are none; ``ConfigurationError`` naming ``where`` otherwise."""
    if value is None or (isinstance(value, Sequence) and not isinstance(value, str) and not value):
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ConfigurationError(f"{where}: icons is a list of icons ({{'src': 'https://...'}}), not {value!r:.60}.")
    if len(value) > MAX_ICONS:
        raise ConfigurationError(f"{where}: {len(value)} icons; give at most {MAX_ICONS} (sizes and themes).")
    return [_icon(where, position, item) for position, item in enumerate(value)]


def _icon(where: str, position: int, item: object) -> types.Icon:
    label = f"{where}: icons[{position}]"
    if isinstance(item, types.Icon):
        fields: dict[str, object] = {
            "src": item.src,
            "mime_type": item.mime_type,
            "sizes": item.sizes,
            "theme": item.theme,
        }
    elif isinstance(item, Mapping):
        unknown = sorted(str(key) for key in item if key not in _KEYS)
        if unknown:
            raise ConfigurationError(f"{label} has {unknown}; an icon has src, mime_type, sizes and theme.")
        fields = {
            "src": item.get("src"),
            "mime_type": item.get("mime_type", item.get("mimeType")),
            "sizes": item.get("sizes"),
            "theme": item.get("theme"),
        }
    else:
        raise ConfigurationError(f"{label} is {item!r:.60}; give an mcp_types.Icon or {{'src': 'https://...'}}.")
    return types.Icon(
        src=_src(label, fields["src"]),
        mime_type=_mime_type(label, fields["mime_type"]),
        sizes=_sizes(label, fields["sizes"]),
        theme=_theme(label, fields["theme"]),
    )


def _src(label: str, src: object) -> str:
    if not isinstance(src, str) or not src:
        raise ConfigurationError(f"{label} has no src: give an https:// URL or a data:image/... URI.")
    if len(src) > MAX_SRC_CHARS:
        raise ConfigurationError(
            f"{label}: src is {len(src):,} characters (at most {MAX_SRC_CHARS:,}); serve the image over https."
        )
    if not (src.startswith("https://") or src.startswith("data:image/")):
        raise ConfigurationError(
            f"{label}: src {src[:60]!r} is neither https:// nor data:image/; clients refuse other schemes, "
            "so serve the image over https or inline it as a data: URI."
        )
    return src


def _mime_type(label: str, mime_type: object) -> str | None:
    if mime_type is None:
        return None
    if not isinstance(mime_type, str) or not mime_type.startswith("image/"):
        raise ConfigurationError(f"{label}: mime_type {mime_type!r:.40} is not an image type such as 'image/png'.")
    return mime_type


def _sizes(label: str, sizes: object) -> list[str] | None:
    if sizes is None:
        return None
    if isinstance(sizes, str) or not isinstance(sizes, Sequence):
        raise ConfigurationError(f"{label}: sizes is a list such as ['48x48', 'any'], not {sizes!r:.40}.")
    for size in sizes:
        if not isinstance(size, str) or not _SIZE.match(size):
            raise ConfigurationError(f"{label}: size {size!r:.40} is not WIDTHxHEIGHT (like '48x48') or 'any'.")
    return list(sizes)


def _theme(label: str, theme: object) -> Literal["light", "dark"] | None:
    if theme is None:
        return None
    if theme == "light":
        return "light"
    if theme == "dark":
        return "dark"
    raise ConfigurationError(f"{label}: theme {theme!r:.40} is not 'light' or 'dark'.")
