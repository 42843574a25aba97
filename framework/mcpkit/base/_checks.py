"""The checks of options given as numbers or flags: each refusal names the option, what was given and what to give."""

from __future__ import annotations

import math
from typing import TypeGuard

from ._errors import ConfigurationError

__all__ = [
    "checked_flag",
    "checked_optional_flag",
    "checked_optional_seconds",
    "checked_optional_whole",
    "checked_seconds",
    "checked_whole",
]


def checked_whole(name: str, value: object, *, least: int = 1, most: int | None = None, unit: str = "") -> int:
    """``value``, a whole number (not a bool) from ``least`` (to ``most``); ``unit`` says of what, in the refusal."""
    if not _is_whole(value, least, most):
        raise ConfigurationError(f"{name} is {_whole(least, most, unit)}; not {value!r:.40}.")
    return value


def checked_optional_whole(name: str, value: object, *, least: int = 1, unit: str = "") -> int | None:
    """``value``, None (no limit) or a whole number from ``least``."""
    if value is not None and not _is_whole(value, least, None):
        raise ConfigurationError(f"{name} is {_whole(least, None, unit)} (or None for no limit); not {value!r:.40}.")
    return value


def checked_seconds(name: str, value: object, *, zero: bool = False) -> float:
    """``value``, a finite number of seconds (not a bool) above 0, or from 0 with ``zero``."""
    if not _is_seconds(value, zero):
        raise ConfigurationError(f"{name} is {_seconds(zero)}, not {value!r:.40}.")
    return float(value)


def checked_optional_seconds(name: str, value: object, *, zero: bool = False) -> float | None:
    """``value``, None (no limit) or a finite number of seconds above 0 (from 0 with ``zero``)."""
    if value is None:
        return None
    if not _is_seconds(value, zero):
        raise ConfigurationError(f"{name} is {_seconds(zero)} or None for no limit, not {value!r:.40}.")
    return float(value)


def checked_flag(name: str, value: object) -> bool:
    """``value``, True or False (not 0, 1 or a string a user meant as one)."""
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} is True or False, not {value!r:.40}.")
    return value


def checked_optional_flag(name: str, value: object) -> bool | None:
    """``value``, True, False or None (where None lets the server choose)."""
    if value is not None and not isinstance(value, bool):
        raise ConfigurationError(f"{name} is True, False or None, not {value!r:.40}.")
    return value


def _is_whole(value: object, least: int, most: int | None) -> TypeGuard[int]:
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return least <= value and (most is None or value <= most)


def _whole(least: int, most: int | None, unit: str) -> str:
    of = f" of {unit}" if unit else ""
    if most is not None:
        return f"a whole number{of} from {least:,} to {most:,}"
    return f"a whole number{of}, at least {least:,}"


def _is_seconds(value: object, zero: bool) -> TypeGuard[int | float]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    return value >= 0 if zero else value > 0


def _seconds(zero: bool) -> str:
    return "a number of seconds, 0 or more" if zero else "a positive number of seconds"
