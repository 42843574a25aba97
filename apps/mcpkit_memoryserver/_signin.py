"""How callers sign in to the memory server: static keys from ``MEMORY_KEYS``, JWTs when configured."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpkit import Authenticator, ConfigurationError, JWTAuth, StaticKeys

__all__ = ["DEMO_KEYS", "KEYS_VARIABLE", "SignIn", "load_sign_in"]

KEYS_VARIABLE = "MEMORY_KEYS"
JWT_SECRET_VARIABLE = "MEMORY_JWT_SECRET"
JWT_PUBLIC_KEY_VARIABLE = "MEMORY_JWT_PUBLIC_KEY_FILE"
JWT_ISSUER_VARIABLE = "MEMORY_JWT_ISSUER"
JWT_AUDIENCE_VARIABLE = "MEMORY_JWT_AUDIENCE"

#: The keys used when neither ``MEMORY_KEYS`` nor a JWT setting is given; documented, so anyone can use them.
DEMO_KEYS: Mapping[str, str] = {"alice": "alice-demo-key", "bob": "bob-demo-key"}


@dataclass(frozen=True, slots=True)
class SignIn:
    """The authenticators to serve with, the static keys among them, and whether those are the demo keys."""

    authenticators: tuple[Authenticator, ...]
    keys: Mapping[str, str] = field(repr=False)
    demo: bool
    jwt: bool


def load_sign_in(environ: Mapping[str, str] | None = None) -> SignIn:
    """Sign-in from the environment: ``MEMORY_KEYS="alice=KEY,bob=KEY"`` and/or JWT settings, else demo keys."""
    env = os.environ if environ is None else environ
    text = env.get(KEYS_VARIABLE, "").strip()
    keys = StaticKeys.parse(text, variable=KEYS_VARIABLE, example="alice=KEY,bob=KEY") if text else {}
    jwt = _jwt(env)
    demo = not keys and jwt is None
    if demo:
        keys = dict(DEMO_KEYS)
    authenticators: list[Authenticator] = [StaticKeys(keys)] if keys else []
    if jwt is not None:
        authenticators.append(jwt)
    return SignIn(tuple(authenticators), keys, demo=demo, jwt=jwt is not None)


def _jwt(env: Mapping[str, str]) -> JWTAuth | None:
    secret = env.get(JWT_SECRET_VARIABLE, "").strip()
    key_file = env.get(JWT_PUBLIC_KEY_VARIABLE, "").strip()
    if secret and key_file:
        raise ConfigurationError(
            f"Set {JWT_SECRET_VARIABLE} (a shared HMAC secret) or {JWT_PUBLIC_KEY_VARIABLE} (a PEM public key "
            "file), not both."
        )
    if not secret and not key_file:
        return None
    issuer = env.get(JWT_ISSUER_VARIABLE, "").strip() or None
    audience = env.get(JWT_AUDIENCE_VARIABLE, "").strip() or None
    if secret:
        return JWTAuth(secret=secret, issuer=issuer, audience=audience)
    try:
        public_key = Path(key_file).read_text()
    except OSError as exc:
        raise ConfigurationError(f"{JWT_PUBLIC_KEY_VARIABLE}={key_file!r} cannot be read: {exc.strerror}.") from None
    return JWTAuth(public_key=public_key, issuer=issuer, audience=audience)
