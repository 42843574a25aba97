"""Hostile credentials against the real HTTP app: forged, stale and mangled tokens get 401, and none reaches a tool.

Every credential is sent the way an attacker would send it, as raw HTTP through ``server.http_app()``:
a 2026-07-28 ``tools/call``, a 2025-11-25 ``initialize``, and a 2025-11-25 ``tools/call`` on a live
session that a valid credential opened. The server allows anonymous callers, the harder case: a
refused credential must never turn into an anonymous caller. A tool that notes every caller who
reaches it is the sensor; a valid credential at the end shows the sensor works.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from mcpkit import JWTAuth, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin
from reliability.callers import LEGACY, MODERN, static_user_id
from reliability.figures import Figures
from reliability.hostile import ACCEPT, META, open_session, serving_in_process, wire

ISSUER, AUDIENCE = "https://id.example.test", "mcpkit-reliability"
NOUR_KEY = "nour-static-key-0123456789abcdef"
NOUR_USER_ID = static_user_id(NOUR_KEY)
SAM_KEY = "sam-static-key-fedcba9876543210"
JSON_POST = {**ACCEPT, "Content-Type": "application/json"}


@tool(name="reach", description="Notes who reached it: the sensor for credentials that got through.")
class Reach(ToolContext):
    callers: ClassVar[list[str | None]] = []

    async def execute(self) -> dict[str, Any]:
        type(self).callers.append(self.caller.user_id)
        return {"user_id": self.caller.user_id}


@tool(name="draft", description="Keeps one draft for this session; returns it, replaced when text is given.")
class Draft(ToolContext):
    async def execute(self, text: str | None = None) -> dict[str, Any]:
        Reach.callers.append(self.caller.user_id)
        if text is not None:
            await self.remember.set("draft", text, scope="session")
        return {"draft": await self.remember.get("draft", scope="session")}


@app(id="hostile", tools=[Reach, Draft], plugins=[RememberPlugin.init(type="memory")])
class HostileApp: ...


# -- keys and tokens ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def idp_key() -> rsa.RSAPrivateKey:
    """The identity provider's signing key; the server only has its public half."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def attacker_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def now() -> int:
    """The time tokens are made for: read as each test starts, so a long run cannot outlast their 10 minutes."""
    return int(time.time())


def public_pem(key: rsa.RSAPrivateKey) -> str:
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return public.decode()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(now: int, **changes: Any) -> dict[str, Any]:
    """Claims the server accepts at ``now``, with ``changes`` applied (a value of None removes the claim)."""
    good = {"sub": "nour", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 600}
    good.update(changes)
    return {name: value for name, value in good.items() if value is not None}


def signed(key: rsa.RSAPrivateKey, payload: Mapping[str, Any], headers: Mapping[str, Any] | None = None) -> str:
    return jwt.encode(dict(payload), key, algorithm="RS256", headers=dict(headers or {}))


def forged(header: Mapping[str, Any], payload: Mapping[str, Any], hmac_key: bytes | None = None) -> str:
    """A hand-made token: no signature at all, or HMAC-SHA256 with ``hmac_key``."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    if hmac_key is None:
        return signing_input + "."
    return f"{signing_input}.{b64(hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest())}"


def hostile_jwts(idp: rsa.RSAPrivateKey, attacker: rsa.RSAPrivateKey, now: int) -> dict[str, str]:
    """Every way the issue names (and a few more) to get a JWT past a server that holds an RS256 public key."""
    valid = signed(idp, claims(now))
    header, payload, signature = valid.split(".")
    attacker_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(attacker.public_key()))
    nested_header = b64(b"[" * 10_000 + b"]" * 10_000)
    as_admin = b64(json.dumps(claims(now, sub="admin")).encode())
    extended = b64(json.dumps(claims(now, exp=now + 10**9)).encode())
    return {
        "alg none": forged({"alg": "none", "typ": "JWT"}, claims(now)),
        "alg NONE": forged({"alg": "NONE", "typ": "JWT"}, claims(now)),
        "alg none, the real signature kept": f"{forged({'alg': 'none'}, claims(now))}{signature}",
        "HS256 keyed with the server's public key": forged({"alg": "HS256"}, claims(now), public_pem(idp).encode()),
        "signed by another RSA key": signed(attacker, claims(now)),
        "another key, announced in a jwk header": signed(attacker, claims(now), {"jwk": attacker_jwk}),
        "another key, announced by jku and kid": signed(
            attacker, claims(now), {"jku": "http://127.0.0.1:1/k", "kid": "x"}
        ),
        "expired": signed(idp, claims(now, exp=now - 120)),
        "not yet valid (nbf)": signed(idp, claims(now, nbf=now + 600)),
        "issued in the future (iat)": signed(idp, claims(now, iat=now + 600)),
        "wrong issuer": signed(idp, claims(now, iss="https://evil.example.test")),
        "no issuer": signed(idp, claims(now, iss=None)),
        "wrong audience": signed(idp, claims(now, aud="another-service")),
        "no audience": signed(idp, claims(now, aud=None)),
        "missing sub": signed(idp, claims(now, sub=None)),
        "empty sub": signed(idp, claims(now, sub="  ")),
        "numeric sub": signed(idp, claims(now, sub=42)),
        "sub posing as a static key's caller": signed(idp, claims(now, sub=NOUR_USER_ID)),
        "sub posing as an anonymous caller": signed(idp, claims(now, sub="anon:0b4f3c8e6a434c369b1e2d2f6f3f7a10")),
        "exp that is not a number": signed(idp, claims(now, exp="tomorrow")),
        "no exp (a token that never expires)": signed(idp, claims(now, exp=None)),
        "exp as a numeric string": signed(idp, claims(now, exp=str(now + 600))),
        "exp as a numeric string, far in the future": signed(idp, claims(now, exp="99999999999")),
        "exp true": signed(idp, claims(now, exp=True)),
        "exp NaN": signed(idp, claims(now, exp=float("nan"))),
        "nbf as a numeric string": signed(idp, claims(now, nbf=str(now - 60))),
        "iat as a numeric string": signed(idp, claims(now, iat=str(now))),
        "iat false": signed(idp, claims(now, iat=False)),
        "tampered payload (sub changed)": f"{header}.{as_admin}.{signature}",
        "tampered payload (exp extended)": f"{header}.{extended}.{signature}",
        "tampered header (alg swapped to HS256)": f"{b64(json.dumps({'alg': 'HS256'}).encode())}.{payload}.{signature}",
        "truncated signature": valid[: -len(signature) // 2],
        "signature removed": f"{header}.{payload}.",
        "truncated to two segments": f"{header}.{payload}",
        "truncated mid-payload": valid[: len(header) + 1 + len(payload) // 2],
        "four segments": f"{valid}.{signature}",
        "oversized header (64 KiB), another key": signed(attacker, claims(now), {"kid": "k" * 65_536}),
        "oversized header segment (64 KiB) of garbage": f"{'A' * 65_536}.{payload}.{signature}",
        "header nested 10,000 levels deep": f"{nested_header}.{payload}.{signature}",
        "header that is not JSON": f"{b64(b'not json at all')}.{payload}.{signature}",
    }


#: Mangled versions of Nour's real key, as raw header bytes after "Bearer " (what is on the wire).
HOSTILE_KEYS: dict[str, bytes] = {
    "unknown key": b"not-a-key-anyone-configured-0123",
    "empty": b"",
    "only spaces": b"    ",
    "a prefix of the key (all but the last character)": NOUR_KEY[:-1].encode(),
    "a prefix of the key (8 characters)": NOUR_KEY[:8].encode(),
    "the key with one more character": (NOUR_KEY + "0").encode(),
    "the key twice": (NOUR_KEY * 2).encode(),
    "the key with a trailing space": (NOUR_KEY + " ").encode(),
    "the key with a trailing tab": (NOUR_KEY + "\t").encode(),
    "the key with a trailing no-break space": NOUR_KEY.encode() + b"\xa0",
    "the key with a trailing NEL": NOUR_KEY.encode() + b"\x85",
    "the key with a trailing vertical tab": NOUR_KEY.encode() + b"\x0b",
    "the key with a trailing NUL": NOUR_KEY.encode() + b"\x00",
    "the key with a trailing CR": NOUR_KEY.encode() + b"\r",
    "the key after a tab": b"\t" + NOUR_KEY.encode(),
    "the key after a no-break space": b"\xa0" + NOUR_KEY.encode(),
    "the key after a form feed": b"\x0c" + NOUR_KEY.encode(),
    "the key in upper case": NOUR_KEY.upper().encode(),
    "the key with its first letter capitalised": NOUR_KEY.capitalize().encode(),
    "the key with a Cyrillic o (UTF-8)": NOUR_KEY.replace("o", "\u043e", 1).encode(),
    "the key's SHA-256 (its user id)": NOUR_USER_ID.removeprefix("static:").encode(),
    "the key's user id with its prefix": NOUR_USER_ID.encode(),
}

#: Authorization headers whose scheme part is wrong, with Nour's real key.
HOSTILE_SCHEMES: dict[str, bytes] = {
    "Basic scheme": b"Basic " + base64.b64encode(f"nour:{NOUR_KEY}".encode()),
    "no scheme": NOUR_KEY.encode(),
    "tab instead of the space": b"Bearer\t" + NOUR_KEY.encode(),
    "Bearer glued to the key": b"Bearer" + NOUR_KEY.encode(),
    "Token scheme": b"Token " + NOUR_KEY.encode(),
}


# -- the server and raw requests ---------------------------------------------------------------------------------------


def make_server(idp: rsa.RSAPrivateKey) -> Server:
    return Server(
        [HostileApp],
        auth=[
            StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY}),
            JWTAuth(public_key=public_pem(idp), issuer=ISSUER, audience=AUDIENCE),
        ],
        allow_anonymous=True,
    )


def authorization(credential: bytes | None) -> dict[str, str | bytes]:
    return {} if credential is None else {"Authorization": credential}


def bearer(token: str | bytes) -> bytes:
    return b"Bearer " + (token.encode() if isinstance(token, str) else token)


async def modern_call(
    http: httpx2.AsyncClient, credential: bytes | None, tool_name: str = "reach", arguments: Any = None
) -> httpx2.Response:
    params = {"name": tool_name, "arguments": arguments or {}, "_meta": META}
    headers: dict[str, str | bytes] = {
        **JSON_POST,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool_name,
        **authorization(credential),
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return await http.post("/mcp", content=json.dumps(body), headers=wire(headers))


async def legacy_initialize(http: httpx2.AsyncClient, credential: bytes | None) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}},
    }
    return await http.post("/mcp", content=json.dumps(body), headers=wire({**JSON_POST, **authorization(credential)}))


async def legacy_call(
    http: httpx2.AsyncClient, session_id: str, credential: bytes | None, tool_name: str = "reach", arguments: Any = None
) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool_name, "arguments": arguments or {}},
    }
    headers = {**JSON_POST, **authorization(credential), "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
    return await http.post("/mcp", content=json.dumps(body), headers=wire(headers))


def refusal_problems(response: httpx2.Response, credential: bytes) -> list[str]:
    """What is wrong with ``response`` as a refusal of ``credential``: 401, a Bearer challenge, no echo."""
    problems = []
    if response.status_code != 401:
        problems.append(f"HTTP {response.status_code}: {response.text[:200]}")
        return problems
    challenge = response.headers.get("www-authenticate", "")
    if not challenge.startswith('Bearer realm="mcp", error="invalid_'):
        problems.append(f"challenge {challenge[:120]!r}")
    oauth_error = response.json()["error"]["data"]["error"]  # RFC 6750's code, inside the JSON-RPC error
    if oauth_error not in ("invalid_token", "invalid_request"):
        problems.append(f"error {oauth_error!r}")
    token = credential.split(b" ", 1)[-1].strip()
    if len(token) >= 8 and (token in response.content or token in challenge.encode("latin-1", "replace")):
        problems.append("the response echoes the credential")
    return problems


@pytest.fixture(autouse=True)
def _fresh_sensor() -> None:
    Reach.callers.clear()


# -- tests -------------------------------------------------------------------------------------------------------------


async def test_hostile_jwts_get_401_in_both_eras_and_none_reaches_a_tool(
    idp_key: rsa.RSAPrivateKey, attacker_key: rsa.RSAPrivateKey, now: int, figures: Figures
) -> None:
    tokens = hostile_jwts(idp_key, attacker_key, now)
    failures: dict[str, list[str]] = {}
    calls = 0
    async with serving_in_process(make_server(idp_key)) as http:
        nour_jwt = bearer(signed(idp_key, claims(now)))
        session_id = await open_session(http, nour_jwt)
        for name, token in tokens.items():
            credential = bearer(token)
            for era, response in [
                ("2026-07-28 tools/call", await modern_call(http, credential)),
                ("2025-11-25 initialize", await legacy_initialize(http, credential)),
                ("2025-11-25 tools/call on a live session", await legacy_call(http, session_id, credential)),
            ]:
                calls += 1
                problems = refusal_problems(response, credential)
                if problems:
                    failures[f"{name} / {era}"] = problems
        leaks = len(Reach.callers)

        # The sensor works: the valid token reaches the tool, in both eras.
        assert (await modern_call(http, nour_jwt)).status_code == 200
        assert (await legacy_call(http, session_id, nour_jwt)).status_code == 200
    assert Reach.callers[leaks:] == ["nour", "nour"]

    figures.record(
        inputs=len(tokens),
        calls=calls,
        leaks=leaks,
        detail=f"{len(tokens)} forged, stale or mangled JWTs against an RS256 public key, each as a 2026-07-28 "
        "tools/call, a 2025-11-25 initialize and a tools/call on a live session: all 401 with WWW-Authenticate",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert leaks == 0, Reach.callers


async def test_mangled_static_keys_and_schemes_get_401_in_both_eras_and_none_reaches_a_tool(
    idp_key: rsa.RSAPrivateKey, figures: Figures
) -> None:
    credentials = {name: bearer(key) for name, key in HOSTILE_KEYS.items()} | HOSTILE_SCHEMES
    failures: dict[str, list[str]] = {}
    calls = 0
    async with serving_in_process(make_server(idp_key)) as http:
        session_id = await open_session(http, bearer(NOUR_KEY))
        for name, credential in credentials.items():
            for era, response in [
                ("2026-07-28 tools/call", await modern_call(http, credential)),
                ("2025-11-25 initialize", await legacy_initialize(http, credential)),
                ("2025-11-25 tools/call on Nour's session", await legacy_call(http, session_id, credential)),
            ]:
                calls += 1
                problems = refusal_problems(response, credential)
                if problems:
                    failures[f"{name} / {era}"] = problems
        leaks = len(Reach.callers)

        assert (await modern_call(http, bearer(NOUR_KEY))).status_code == 200
        assert (await legacy_call(http, session_id, bearer(NOUR_KEY))).status_code == 200
    assert Reach.callers[leaks:] == [NOUR_USER_ID] * 2

    figures.record(
        inputs=len(credentials),
        calls=calls,
        leaks=leaks,
        detail=f"{len(credentials)} near misses of a real static key (prefixes, case, whitespace inside the header "
        "value, look-alike characters, its hash) and wrong schemes, in both eras: all 401",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert leaks == 0, Reach.callers


async def test_a_2025_11_25_session_cannot_be_taken_over_with_another_callers_credential(
    idp_key: rsa.RSAPrivateKey, attacker_key: rsa.RSAPrivateKey, now: int, figures: Figures
) -> None:
    nour = bearer(NOUR_KEY)
    intruders: dict[str, tuple[bytes | None, int]] = {
        "Sam's valid key": (bearer(SAM_KEY), 404),
        "a valid JWT whose sub is nour": (bearer(signed(idp_key, claims(now))), 404),
        "a valid JWT whose sub is Nour's static user id": (bearer(signed(idp_key, claims(now, sub=NOUR_USER_ID))), 401),
        "no credentials (anonymous callers are allowed)": (None, 404),
        "Nour's key with a trailing no-break space": (nour + b"\xa0", 401),
        "Nour's key in upper case": (bearer(NOUR_KEY.upper()), 401),
        "an expired JWT for nour": (bearer(signed(idp_key, claims(now, exp=now - 60))), 401),
        "an HS256 JWT keyed with the public key": (
            bearer(forged({"alg": "HS256"}, claims(now), public_pem(idp_key).encode())),
            401,
        ),
    }
    failures: dict[str, str] = {}
    attempts = 0
    async with serving_in_process(make_server(idp_key)) as http:
        session_id = await open_session(http, nour)
        stored = await legacy_call(http, session_id, nour, "draft", {"text": "Dear customer, Nour"})
        assert stored.json()["result"]["structuredContent"] == {"draft": "Dear customer, Nour"}
        reached_before = len(Reach.callers)

        for name, (credential, expected) in intruders.items():
            sent = {
                "read the draft": await legacy_call(http, session_id, credential, "draft"),
                "overwrite the draft": await legacy_call(http, session_id, credential, "draft", {"text": "pwned"}),
                "open the session's event stream": await http.get(
                    "/mcp",
                    headers=wire(
                        {
                            "Accept": "text/event-stream",
                            "Mcp-Session-Id": session_id,
                            "MCP-Protocol-Version": LEGACY,
                            **authorization(credential),
                        }
                    ),
                ),
                "end the session": await http.delete(
                    "/mcp",
                    headers=wire(
                        {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY, **authorization(credential)}
                    ),
                ),
            }
            for action, response in sent.items():
                attempts += 1
                if response.status_code != expected or "Dear customer" in response.text:
                    failures[f"{name} / {action}"] = f"HTTP {response.status_code}: {response.text[:160]}"
        leaks = len(Reach.callers) - reached_before

        still = await legacy_call(http, session_id, nour, "draft")

    figures.record(
        inputs=len(intruders),
        calls=attempts,
        leaks=leaks,
        detail="a 2025-11-25 session opened with Nour's key, attacked with 8 other credentials (read, overwrite, "
        "event stream, DELETE): 404 for valid foreign credentials, 401 for invalid ones; her draft unchanged",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert leaks == 0, Reach.callers
    assert still.status_code == 200, still.text
    assert still.json()["result"]["structuredContent"] == {"draft": "Dear customer, Nour"}
