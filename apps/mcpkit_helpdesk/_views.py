"""The help desk's views as a host receives them: each HTML page of the package with the bridge (``bridge.js``)
inlined where it says ``/* the bridge */`` and the style they share (``view.css``) where it says ``/* the style */``,
so a view is one self-contained document, with nothing to fetch."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["view_html"]

#: Where each shared file goes in a page: inside a ``<script>`` and a ``<style>`` element.
_INLINED = {"/* the bridge */": "bridge.js", "/* the style */": "view.css"}


@cache
def view_html(page: str) -> str:
    """``page`` (like ``"draft.html"``) with the bridge and the shared style inlined; read from the package once."""
    files = resources.files(__package__)
    html = files.joinpath(page).read_text(encoding="utf-8")
    for mark, shared in _INLINED.items():
        if html.count(mark) != 1:
            raise RuntimeError(f"{page} must hold {mark!r} once, where {shared} goes")
        html = html.replace(mark, files.joinpath(shared).read_text(encoding="utf-8").rstrip())
    return html
