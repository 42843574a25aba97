"""Asking the client while a call runs: the user (``self.elicit``), its model (``self.sample``) and its roots
(``self.roots``); live requests on 2025-11-25, ``InputRequiredResult`` rounds with a sealed ``requestState`` on
2026-07-28."""

from ._elicitation import (
    DEFAULT_QUESTION_TIMEOUT,
    Answers,
    Elicited,
    InputNeeded,
    ask,
    elicit_request,
    elicited,
    sample_request,
    unavailable,
)
from ._request_state import request_state_boundary

__all__ = [
    "DEFAULT_QUESTION_TIMEOUT",
    "Answers",
    "Elicited",
    "InputNeeded",
    "ask",
    "elicit_request",
    "elicited",
    "request_state_boundary",
    "sample_request",
    "unavailable",
]
