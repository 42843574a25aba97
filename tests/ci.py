"""What a test does when an outside service or program it needs is not here."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["missing"]


def missing(reason: str) -> NoReturn:
    """Skip locally, saying why; fail under ``CI=true``, where something missing means a broken pipeline."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true, so this is a failure rather than a skip)")
    pytest.skip(reason)
