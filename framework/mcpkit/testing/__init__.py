"""Testing support: call tools as named users through the real stack, and move the clock."""

from ..base import ManualClock
from ._call_as import CallAs
from ._client import PROTOCOLS, CallerClient, HTTPRefusedError, ToolCallError, error_code
from ._running import running

__all__ = [
    "PROTOCOLS",
    "CallAs",
    "CallerClient",
    "HTTPRefusedError",
    "ManualClock",
    "ToolCallError",
    "error_code",
    "running",
]
