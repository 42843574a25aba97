"""``Services``: what every context of one server shares, handed to each call's context by the dispatchers."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..elicitation import DEFAULT_QUESTION_TIMEOUT
from ..reporting import LogLevels
from ._list_changes import ListChanges
from ._subscriptions import Subscriptions

__all__ = ["Services"]


@dataclass(frozen=True, slots=True)
class Services:
    """What every context of one server shares: the sessions' log levels, the resource watchers, the listers, and
    how long a live question to the client may wait for its answer."""

    log_levels: LogLevels = field(default_factory=LogLevels)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)  # with SubscriptionLimits' defaults
    list_changes: ListChanges = field(init=False)
    question_timeout: float = DEFAULT_QUESTION_TIMEOUT

    def __post_init__(self) -> None:
        object.__setattr__(self, "list_changes", ListChanges(self.subscriptions.bus))
