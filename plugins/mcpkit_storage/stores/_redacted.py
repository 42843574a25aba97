"""A store URL as logs and ``repr`` show it: without its password."""

from __future__ import annotations

import re

__all__ = ["without_password"]


def without_password(url: str) -> str:
    """``url`` for logs: a password in the user part, or a ``password=`` query parameter (libpq), as ``***``."""
    url = re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", url)
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user + ':***@' if user else '***@'}{host}"
