"""Testing support: call tools as named users through the real stack, answer what the server asks, follow tasks,
load a tool's view, and move the clock; each test keeps its data on a store of its own."""

from ..base import ManualClock
from ._answers import Elicit, Question, Roots, Sample
from ._call_as import CallAs
from ._client import PROTOCOLS, CallerClient, HTTPRefusedError, ToolCallError, error_code
from ._heard import LogMessage, Progress
from ._running import running
from ._tasks import TaskCancelledError, TasksExtension, TaskStarted, TaskStatus, ToolTask
from ._views import ShownView

__all__ = [
    "PROTOCOLS",
    "CallAs",
    "CallerClient",
    "Elicit",
    "HTTPRefusedError",
    "LogMessage",
    "ManualClock",
    "Progress",
    "Question",
    "Roots",
    "Sample",
    "ShownView",
    "TaskCancelledError",
    "TaskStarted",
    "TaskStatus",
    "TasksExtension",
    "ToolCallError",
    "ToolTask",
    "error_code",
    "running",
]
