"""``CallAs``: the ``call_as`` fixture's value — a client per named caller."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp

from ..auth import JWTAuth, StaticKeys
from ..server import Server
from ._answers import Answers, Elicit, Roots, Sample
from ._client import CallerClient

__all__ = ["CallAs"]

_Key = tuple[str, str | None, str, tuple[bool, bool, bool], tuple[bool, bool]]


class CallAs:
    """``call_as("nour")`` is Nour's client (her static key); ``call_as(None)`` is an anonymous caller.

    The same name gives the same client (so, on 2025-11-25, the same session) for the whole test; ``fresh=True``
    opens another connection. ``elicit=``, ``sample=`` and ``roots=`` are what the client answers when the server
    asks (it declares only those capabilities: without them it cannot be asked); ``tasks=True`` declares the tasks
    extension, ``ui=True`` the MCP Apps one (a host that renders views). A client that answers other kinds of
    questions, or declares other extensions, is another client of the same caller; new answers of the same kinds
    replace the client's old ones.
    """

    def __init__(self, server: Server, app: ASGIApp, protocol: str) -> None:
        self.server = server
        self.protocol = protocol
        self._app = app
        self._clients: dict[_Key, CallerClient] = {}
        self._opened: list[CallerClient] = []

    def __call__(
        self,
        label: str | None,
        *,
        protocol: str | None = None,
        fresh: bool = False,
        elicit: Elicit | None = None,
        sample: Sample | None = None,
        roots: Roots | None = None,
        tasks: bool = False,
        ui: bool = False,
    ) -> CallerClient:
        token = None if label is None else self._static_key(label)
        answers = Answers(elicit, sample, roots, _named(label or "anonymous"))
        return self._client(label or "anonymous", token, protocol, fresh, answers, (tasks, ui))

    def anonymous(
        self,
        *,
        protocol: str | None = None,
        fresh: bool = False,
        elicit: Elicit | None = None,
        sample: Sample | None = None,
        roots: Roots | None = None,
        tasks: bool = False,
        ui: bool = False,
    ) -> CallerClient:
        """A caller that sends no credentials."""
        answers = Answers(elicit, sample, roots, "call_as.anonymous()")
        return self._client("anonymous", None, protocol, fresh, answers, (tasks, ui))

    def token(
        self,
        token: str,
        *,
        protocol: str | None = None,
        fresh: bool = False,
        elicit: Elicit | None = None,
        sample: Sample | None = None,
        roots: Roots | None = None,
        tasks: bool = False,
        ui: bool = False,
    ) -> CallerClient:
        """A caller that sends exactly this bearer token."""
        answers = Answers(elicit, sample, roots, f"call_as.token({token[:8]!r}...)")
        return self._client(f"token:{token[:8]}", token, protocol, fresh, answers, (tasks, ui))

    def jwt(
        self,
        sub: str,
        claims: Mapping[str, Any] | None = None,
        *,
        protocol: str | None = None,
        fresh: bool = False,
        elicit: Elicit | None = None,
        sample: Sample | None = None,
        roots: Roots | None = None,
        tasks: bool = False,
        ui: bool = False,
    ) -> CallerClient:
        """A caller with a JWT for ``sub`` signed by the server's ``JWTAuth`` secret (plus ``claims``)."""
        auth = next((a for a in self.server.authenticators if isinstance(a, JWTAuth)), None)
        if auth is None:
            raise LookupError("call_as.jwt() needs a JWTAuth on the server; use call_as.token(token) otherwise.")
        name = f"jwt:{sub}" if not claims else f"jwt:{sub}:{json.dumps(dict(claims), sort_keys=True, default=str)}"
        answers = Answers(elicit, sample, roots, f"call_as.jwt({sub!r})")
        era = protocol or self.protocol
        # The same sub (and claims) is the same client, even once a second has passed and a token issued
        # now would differ (its iat and exp): on 2025-11-25 it keeps its session.
        if not fresh:
            for (cached_name, _, cached_era, kinds, declared), client in self._clients.items():
                if (cached_name, cached_era, kinds, declared) == (name, era, answers.kinds, (tasks, ui)):
                    client.answer_with(answers)
                    return client
        return self._client(name, auth.issue_token(sub, claims), protocol, fresh, answers, (tasks, ui))

    def _static_key(self, label: str) -> str:
        keys = [a for a in self.server.authenticators if isinstance(a, StaticKeys)]
        for auth in keys:
            if label in auth.labels:
                return auth.key_for(label)
        known = sorted(label for auth in keys for label in auth.labels)
        raise LookupError(
            f"call_as({label!r}): no StaticKeys label {label!r} on this server (labels: {known}). "
            "Use call_as(None) for an anonymous caller, call_as.jwt(sub) or call_as.token(token)."
        )

    def _client(
        self,
        name: str,
        token: str | None,
        protocol: str | None,
        fresh: bool,
        answers: Answers,
        extensions: tuple[bool, bool],
    ) -> CallerClient:
        era = protocol or self.protocol
        cache_key = (name, token, era, answers.kinds, extensions)
        client = None if fresh else self._clients.get(cache_key)
        if client is not None:
            client.answer_with(answers)
            return client
        client = CallerClient(self._app, token, era, name, answers, tasks=extensions[0], ui=extensions[1])
        self._opened.append(client)
        if not fresh:
            self._clients[cache_key] = client
        return client

    async def aclose(self) -> None:
        for client in reversed(self._opened):
            await client.aclose()
        self._opened.clear()
        self._clients.clear()


def _named(label: str) -> str:
    return f"call_as({label!r})"
