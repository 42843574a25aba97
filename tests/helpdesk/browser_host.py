"""A browser host for the help desk's views: the system's Chromium, driven by Playwright (never its own download),
opens ``view_host.html`` (a small host written to the MCP Apps extension) served on 127.0.0.1, which loads a view
in a sandboxed iframe under the CSP the view's ``_meta.ui`` asks for and relays the view's calls to the server as
one caller (a ``call_as`` client: the real HTTP app, the caller's real ``Authorization`` header)."""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import AsyncIterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcp import MCPError

from ci import missing
from mcpkit.testing import CallerClient

__all__ = ["BrowserHost", "ShownInBrowser", "browser_host", "csp_of"]

_CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/chromium-headless-shell")
#: How long ``expect`` waits for a view to show something before the test fails (Playwright's default is 5 s).
_PATIENCE_MS = 30_000
_HOST_PAGE = (Path(__file__).parent / "view_host.html").read_bytes()
#: ``_meta.ui.csp`` key -> the directives it opens (the extension's table).
_OPENS = {
    "connectDomains": ("connect-src",),
    "resourceDomains": ("script-src", "style-src", "img-src", "font-src", "media-src"),
    "frameDomains": ("frame-src",),
    "baseUriDomains": ("base-uri",),
}


def csp_of(ui: Mapping[str, Any]) -> str:
    """The Content-Security-Policy a host serves a view with: the extension's restrictive default, opened by the
    origins the view's ``_meta.ui.csp`` declares, and nothing else."""
    directives = {
        "default-src": ["'none'"],
        "script-src": ["'self'", "'unsafe-inline'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "media-src": ["'self'", "data:"],
        "connect-src": [],
        "frame-src": [],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
    declared = ui.get("csp") or {}
    for key, opened in _OPENS.items():
        for directive in opened:
            directives[directive] += list(declared.get(key, ()))
    return "; ".join(
        f"{name} {' '.join(sources) or chr(39) + 'none' + chr(39)}" for name, sources in directives.items()
    )


class _Pages(BaseHTTPRequestHandler):
    """Serves the host page at ``/`` and each registered view at ``/view/N`` with its CSP header."""

    views: dict[str, tuple[bytes, str]] = {}

    def do_GET(self) -> None:
        if self.path == "/":
            self._send(_HOST_PAGE, None)
        elif self.path in self.views:
            self._send(*self.views[self.path])
        else:
            self.send_error(404)

    def _send(self, body: bytes, csp: str | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if csp is not None:
            self.send_header("Content-Security-Policy", csp)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ShownInBrowser:
    """A view open in a page: ``frame`` to click in, the host's ``log`` of messages, the page's ``errors``."""

    def __init__(self, page: Any, errors: list[str]) -> None:
        self.page = page
        self.frame = page.frame_locator("#view")
        self.errors = errors

    async def log(self) -> list[dict[str, Any]]:
        """Every message the view sent the host, and each answer, in order."""
        logged: list[dict[str, Any]] = await self.page.evaluate("window.hostLog")
        return logged

    async def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The tools the view called through the host, with their arguments, in order."""
        return [
            (entry["params"]["name"], entry["params"].get("arguments", {}))
            for entry in await self.log()
            if entry.get("method") == "tools/call"
        ]


class BrowserHost:
    """Opens a tool's view as one caller's host would, each caller in a browser context of their own."""

    def __init__(self, browser: Any, base: str, views: dict[str, tuple[bytes, str]]) -> None:
        self._browser = browser
        self._base = base
        self._views = views

    async def show(self, caller: CallerClient, tool: str, arguments: Mapping[str, Any]) -> ShownInBrowser:
        """Call ``tool`` as ``caller`` (as the model would) and show its result in its view."""
        view = await caller.view_of(tool)
        path = f"/view/{len(self._views) + 1}"
        self._views[path] = (view.html.encode(), csp_of(view.ui))
        context = await self._browser.new_context()
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.expose_function("relay", lambda method, params: _relay(caller, method, params))
        await page.goto(self._base + "/")
        await page.evaluate(
            "([url, tool, args]) => window.showView(url, tool, args)", [self._base + path, tool, dict(arguments)]
        )
        # showView returns once it set the frame's src: wait for the view's own document, or a test's first
        # evaluate in the frame can run in the blank one the navigation then destroys (seen under load in CI).
        frame = await (await page.query_selector("#view")).content_frame()
        await frame.wait_for_url(self._base + path)
        return ShownInBrowser(page, errors)


async def _relay(caller: CallerClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request of the host page's, made on ``caller``'s connection: a JSON-RPC result or error as a dict."""
    try:
        if method == "tools/list":
            tools = await caller.list_tools()
            return {"result": [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]}
        if method == "tools/call":
            called = await caller.call_tool(params["name"], params.get("arguments") or {})
            return {"result": called.model_dump(mode="json", by_alias=True, exclude_none=True)}
    except MCPError as error:
        return {"error": {"code": error.error.code, "message": error.error.message}}
    return {"error": {"code": -32601, "message": f"the test host relays no {method}"}}


@contextlib.asynccontextmanager
async def browser_host() -> AsyncIterator[BrowserHost]:
    """Chromium (headless) and the host pages on 127.0.0.1; skips saying why without them (fails under CI=true)."""
    executable = next((path for path in _CHROMIUM if shutil.which(path)), None) or shutil.which("chromium")
    if executable is None:
        missing("no Chromium here (apt-get install chromium): the views' browser tests need one")
    try:
        from playwright.async_api import async_playwright, expect
    except ImportError:
        missing(
            "playwright is not installed (pip install -e '.[dev]'): the views' browser tests drive Chromium with it"
        )
    # expect() waits for what the view shows until it shows it; the ceiling is for a busy machine, not a measure.
    expect.set_options(timeout=_PATIENCE_MS)
    views: dict[str, tuple[bytes, str]] = {}
    handler = type("Pages", (_Pages,), {"views": views})
    pages = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=pages.serve_forever, daemon=True)
    serving.start()
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable, headless=True)
            try:
                yield BrowserHost(browser, f"http://127.0.0.1:{pages.server_address[1]}", views)
            finally:
                await browser.close()
    finally:
        pages.shutdown()
        pages.server_close()
