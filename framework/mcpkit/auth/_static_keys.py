"""Static API keys: a fixed set of shared bearer tokens, each with a label for logs and tests."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from ..base import ConfigurationError, Identity

__all__ = ["StaticKeys"]

#: Shorter keys are refused at construction; they are too easy to guess.
MIN_KEY_LENGTH = 8
#: A static caller's user id is "static:" and this many hex digits of the key's SHA-256.
USER_ID_HEX_CHARS = 32

_LABEL = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
#: RFC 6750's b64token: what can be sent as ``Authorization: Bearer KEY``.
_TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")


def _digest(secret: str) -> bytes:
    """SHA-256 of a key or presented token (lone surrogates pass through rather than crash)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


class StaticKeys:
    """Accepts a bearer token equal to one of the configured keys, e.g. ``StaticKeys({"nour": key})``.

    Everyone holding a key signs in as the same caller, ``"static:" + sha256(key)[:32 hex]``:
    the user id never contains the key, and changing the key gives a new caller.

    Comparison is constant-time with respect to the keys: the presented token is hashed and its
    SHA-256 digest looked up in a dict keyed by the digests of the configured keys. Any timing the
    lookup leaks is about digests, which an attacker cannot steer towards a key without a preimage;
    unlike a loop of ``hmac.compare_digest`` the cost does not grow with the number of keys.
    """

    def __init__(self, keys: Mapping[str, str]) -> None:
        if not isinstance(keys, Mapping) or not keys:
            got = "an empty mapping" if isinstance(keys, Mapping) else f"a {type(keys).__name__}"
            raise ConfigurationError(
                f'StaticKeys needs a non-empty mapping of label to key, e.g. StaticKeys({{"nour": key}}); got {got}'
            )
        self._keys: dict[str, str] = {}
        self._by_digest: dict[bytes, Identity] = {}
        for label, key in keys.items():
            _check_entry(label, key)
            digest = _digest(key)
            clash = self._by_digest.get(digest)
            if clash is not None:
                raise ConfigurationError(
                    f"StaticKeys: labels {clash.label!r} and {label!r} have the same key; "
                    "give each label its own key (they would sign in as the same caller)"
                )
            self._keys[label] = key
            self._by_digest[digest] = Identity(user_id=_user_id(digest), kind="static", label=label, claims={})

    @staticmethod
    def parse(text: str, *, variable: str, example: str = "nour=KEY,sam=KEY") -> dict[str, str]:
        """Keys written as ``"nour=KEY,sam=KEY"`` (an environment variable's form) as a label-to-key dict.

        Errors name ``variable`` and show ``example``, and never repeat a key.
        """
        form = f'{variable}="{example}" (label=key pairs separated by commas)'
        keys: dict[str, str] = {}
        for number, entry in enumerate(text.split(","), start=1):
            label, sep, key = (part.strip() for part in entry.partition("="))
            if not sep:
                problem = "is empty" if not entry.strip() else "has no '='"
                raise ConfigurationError(f"{variable} is malformed: entry {number} {problem}. Expected {form}.")
            if not _LABEL.match(label):
                raise ConfigurationError(
                    f"{variable} is malformed: entry {number} has the label {label!r}; a label is 1-64 "
                    f"letters, digits, '_', '-' or '.'. Expected {form}."
                )
            if label in keys:
                raise ConfigurationError(f"{variable} names {label!r} twice; give each one key. Expected {form}.")
            if not key:
                raise ConfigurationError(f"{variable} is malformed: {label!r} has an empty key. Expected {form}.")
            if not _TOKEN.match(key):
                raise ConfigurationError(
                    f"{variable} is malformed: the key for {label!r} cannot be sent as a bearer token; use "
                    "letters, digits and - . _ ~ + / (then '=' padding), and separate entries with commas. "
                    f"Expected {form}."
                )
            keys[label] = key
        try:
            StaticKeys(keys)  # the checks the server makes too (length, one key per label)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{variable}: {str(exc).removeprefix('StaticKeys: ')}.") from None
        return keys

    @property
    def labels(self) -> tuple[str, ...]:
        """The configured labels, in the order given."""
        return tuple(self._keys)

    def key_for(self, label: str) -> str:
        """The key configured under ``label`` (for test fixtures that need to present it)."""
        try:
            return self._keys[label]
        except KeyError:
            known = ", ".join(repr(known) for known in self._keys)
            raise KeyError(f"StaticKeys has no key labelled {label!r}; known labels: {known}") from None

    def user_id(self, label: str) -> str:
        """The user id the key labelled ``label`` signs in as: what user scope keeps its values under, and what
        ``mcpkit remember purge --user`` takes. The label is not part of it; the key is."""
        return _user_id(_digest(self.key_for(label)))

    async def authenticate(self, token: str) -> Identity | None:
        """The caller for a configured key, or ``None`` so another authenticator may try the token."""
        return self._by_digest.get(_digest(token))

    def __repr__(self) -> str:
        return f"StaticKeys(labels={list(self._keys)!r})"


def _user_id(digest: bytes) -> str:
    return "static:" + digest.hex()[:USER_ID_HEX_CHARS]


def _check_entry(label: object, key: object) -> None:
    """Refuse a label or key that could not work, saying which label and what to do."""
    if not isinstance(label, str) or not label.strip():
        raise ConfigurationError(f"StaticKeys: every label must be a non-empty string; got {label!r}")
    if not isinstance(key, str):
        raise ConfigurationError(f"StaticKeys: the key for {label!r} must be a string, not {type(key).__name__}")
    if len(key) < MIN_KEY_LENGTH:
        raise ConfigurationError(
            f"StaticKeys: the key for {label!r} is {len(key)} characters; use at least {MIN_KEY_LENGTH} "
            "(for example secrets.token_urlsafe(32))"
        )
    if any(char.isspace() for char in key):
        raise ConfigurationError(
            f"StaticKeys: the key for {label!r} contains whitespace and could not be sent as a bearer "
            "token; use URL-safe characters (for example secrets.token_urlsafe(32))"
        )
