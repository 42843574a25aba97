"""The support agents' static keys: from ``HELPDESK_KEYS``, or the documented demo keys."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from mcpkit import ConfigurationError, StaticKeys

__all__ = ["DEMO_KEYS", "KEYS_VARIABLE", "AgentKeys", "load_keys", "parse_keys"]

#: The environment variable holding the agents' keys.
KEYS_VARIABLE = "HELPDESK_KEYS"

#: The keys used when ``HELPDESK_KEYS`` is unset; documented, so anyone can use them.
DEMO_KEYS: Mapping[str, str] = {"nour": "nour-demo-key", "sam": "sam-demo-key"}

_FORM = f'{KEYS_VARIABLE}="nour=KEY,sam=KEY" (label=key pairs separated by commas)'
_LABEL = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
#: RFC 6750's b64token: what can be sent as ``Authorization: Bearer KEY``.
_TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")


@dataclass(frozen=True, slots=True)
class AgentKeys:
    """The label-to-key mapping to serve with, and whether it is the demo keys."""

    keys: Mapping[str, str] = field(repr=False)
    demo: bool


def parse_keys(text: str) -> dict[str, str]:
    """``"nour=KEY,sam=KEY"`` as ``{"nour": KEY, "sam": KEY}``; errors never repeat a key."""
    keys: dict[str, str] = {}
    for number, entry in enumerate(text.split(","), start=1):
        label, sep, key = (part.strip() for part in entry.partition("="))
        if not sep:
            problem = "is empty" if not entry.strip() else "has no '='"
            raise ConfigurationError(f"{KEYS_VARIABLE} is malformed: entry {number} {problem}. Expected {_FORM}.")
        if not _LABEL.match(label):
            raise ConfigurationError(
                f"{KEYS_VARIABLE} is malformed: entry {number} has the label {label!r}; a label is 1-64 "
                f"letters, digits, '_', '-' or '.'. Expected {_FORM}."
            )
        if label in keys:
            raise ConfigurationError(
                f"{KEYS_VARIABLE} names {label!r} twice; give each agent one key. Expected {_FORM}."
            )
        if not key:
            raise ConfigurationError(f"{KEYS_VARIABLE} is malformed: {label!r} has an empty key. Expected {_FORM}.")
        if not _TOKEN.match(key):
            raise ConfigurationError(
                f"{KEYS_VARIABLE} is malformed: the key for {label!r} cannot be sent as a bearer token; use "
                "letters, digits and - . _ ~ + / (then '=' padding), and separate entries with commas. "
                f"Expected {_FORM}."
            )
        keys[label] = key
    try:
        StaticKeys(keys)  # the checks the server makes too (length, one key per label)
    except ValueError as exc:
        raise ConfigurationError(f"{KEYS_VARIABLE}: {str(exc).removeprefix('StaticKeys: ')}.") from None
    return keys


def load_keys(environ: Mapping[str, str] | None = None) -> AgentKeys:
    """The keys from ``HELPDESK_KEYS`` (empty counts as unset), else the demo keys."""
    text = (os.environ if environ is None else environ).get(KEYS_VARIABLE, "")
    if not text.strip():
        return AgentKeys(dict(DEMO_KEYS), demo=True)
    return AgentKeys(parse_keys(text), demo=False)
