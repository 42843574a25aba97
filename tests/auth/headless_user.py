"""A person at a browser, without the browser: answers an authorization server's sign-in and consent pages.

Given to the official ``mcp`` client's ``OAuthClientProvider`` as its redirect and callback handlers: the
client hands over the authorization URL, this follows the redirects, fills in the sign-in form it finds
(fields ``login`` and ``password``), submits the consent form whose action ends in ``/confirm``, and stops
at the client's redirect URI, whose ``code``, ``state`` and ``iss`` go back to the client (the TypeScript SDK's
test relays the URL and the code to and from its Node script). Nothing here knows oidc-provider's internals:
only what its HTML pages say.
"""

from __future__ import annotations

from collections.abc import Mapping
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp.shared.auth import AuthorizationCodeResult

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the user stops at the redirect
MAX_STEPS = 20


class _Forms(HTMLParser):
    """Each ``<form>``'s action and the names of its inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form":
            self.forms.append((found.get("action") or "", []))
        elif tag == "input" and self.forms and found.get("name"):
            self.forms[-1][1].append(found["name"] or "")


class SignInRefused(Exception):
    """The authorization server showed the sign-in page again, or sent the user back with an error."""


class HeadlessUser:
    """One account's login and password, answering the pages of one authorization at a time."""

    def __init__(self, login: str, password: str, *, allow: bool = True) -> None:
        self.login = login
        self._password = password
        self._allow = allow
        self._result: AuthorizationCodeResult | None = None
        self.pages_seen: list[str] = []  # the paths of the HTML pages answered, in order
        self.page_texts: list[str] = []  # and their HTML

    async def redirect_handler(self, authorization_url: str) -> None:
        """Follow ``authorization_url`` to the client's redirect URI, answering each page on the way."""
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10.0) as browser:
            await self._follow(browser, await browser.get(authorization_url))

    async def submit(self, authorization_endpoint: str, request: Mapping[str, str]) -> None:
        """Send the authorization ``request`` as a form (OAuth 2.0 allows POST), then as ``redirect_handler``."""
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10.0) as browser:
            await self._follow(browser, await browser.post(authorization_endpoint, data=dict(request)))

    async def _follow(self, browser: httpx2.AsyncClient, response: httpx2.Response) -> None:
        for _ in range(MAX_STEPS):
            if response.is_redirect:
                target = urljoin(str(response.url), response.headers["location"])
                if target.startswith(REDIRECT_URI):
                    self._result = self._arrived(target)
                    return
                response = await browser.get(target)
                continue
            response = await self._answer(browser, response)
        raise SignInRefused(f"no redirect back after {MAX_STEPS} pages")

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self._result is not None, "redirect_handler did not reach the redirect URI"
        result, self._result = self._result, None
        return result

    async def _answer(self, browser: httpx2.AsyncClient, page: httpx2.Response) -> httpx2.Response:
        if page.status_code not in (200, 401) or "html" not in page.headers.get("content-type", ""):
            raise SignInRefused(f"{page.url} answered {page.status_code}: {page.text[:300]}")
        parser = _Forms()
        parser.feed(page.text)
        self.pages_seen.append(urlsplit(str(page.url)).path)
        self.page_texts.append(page.text)
        for action, inputs in parser.forms:
            if {"login", "password"} <= set(inputs):
                if page.status_code == 401:
                    raise SignInRefused(f"the sign-in page came back for {self.login!r}: {page.text[:300]}")
                fields = {"login": self.login, "password": self._password}
                return await browser.post(urljoin(str(page.url), action), data=fields)
            if action.endswith("/confirm" if self._allow else "/abort"):
                return await browser.post(urljoin(str(page.url), action))
        raise SignInRefused(f"{page.url} has no form to answer: {page.text[:300]}")

    @staticmethod
    def _arrived(url: str) -> AuthorizationCodeResult:
        query = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
        if "code" not in query:
            raise SignInRefused(f"sent back without a code: {query}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
