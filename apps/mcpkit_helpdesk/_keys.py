"""The support agents' static keys: from ``HELPDESK_KEYS``, or the documented demo keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from mcpkit import StaticKeys

__all__ = ["DEMO_KEYS", "KEYS_VARIABLE", "AgentKeys", "load_keys", "parse_keys"]

#: The environment variable holding the agents' keys.
KEYS_VARIABLE = "HELPDESK_KEYS"

#: The keys used when ``HELPDESK_KEYS`` is unset; documented, so anyone can use them.
DEMO_KEYS: Mapping[str, str] = {"nour": "nour-demo-key", "sam": "sam-demo-key"}


@dataclass(frozen=True, slots=True)
class AgentKeys:
    """The label-to-key mapping to serve with, and whether it is the demo keys."""

    keys: Mapping[str, str] = field(repr=False)
    demo: bool


def parse_keys(text: str) -> dict[str, str]:
    """``"nour=KEY,sam=KEY"`` as ``{"nour": KEY, "sam": KEY}``; errors never repeat a key."""
    return StaticKeys.parse(text, variable=KEYS_VARIABLE)


def load_keys(environ: Mapping[str, str] | None = None) -> AgentKeys:
    """The keys from ``HELPDESK_KEYS`` (empty counts as unset), else the demo keys."""
    text = (os.environ if environ is None else environ).get(KEYS_VARIABLE, "")
    if not text.strip():
        return AgentKeys(dict(DEMO_KEYS), demo=True)
    return AgentKeys(parse_keys(text), demo=False)
