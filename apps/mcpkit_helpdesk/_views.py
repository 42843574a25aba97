"""The help desk's views as a host receives them: each HTML page of the package with the bridge (``bridge.js``)
inlined where it says ``/* the bridge */``, so a view is one self-contained document, with nothing to fetch."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["view_html"]

_MARK = "/* the bridge */"


@cache
def view_html(page: str) -> str:
    """``page`` (like ``"draft.html"``) with the bridge inlined; read from the package once."""
    files = resources.files(__package__)
    html = files.joinpath(page).read_text(encoding="utf-8")
    if html.count(_MARK) != 1:
        raise RuntimeError(f"{page} must hold {_MARK!r} once, in the <script> the bridge goes into")
    return html.replace(_MARK, files.joinpath("bridge.js").read_text(encoding="utf-8").rstrip())
