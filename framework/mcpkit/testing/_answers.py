"""``Answers``: what a ``call_as`` client answers when the server asks (``self.elicit``, ``self.sample``,
``self.roots``), given as scripted answers or as a handler, and every ``Question`` it was asked.

A client declares a capability only when it has answers for it, as a real client declares only what it can do; the
same callbacks serve 2025-11-25 live requests and 2026-07-28 rounds (and questions a task parks on).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import mcp_types as types

__all__ = ["Answers", "Elicit", "Question", "Roots", "Sample"]

ElicitAnswer: TypeAlias = Mapping[str, Any] | Literal["decline", "cancel"] | types.ElicitResult
#: ``elicit=``: the content to accept with (a dict), ``"decline"`` or ``"cancel"``, an ``ElicitResult``; a list of
#: those, one per question in order; or a function of the question's ``ElicitRequestParams`` returning one.
Elicit: TypeAlias = (
    ElicitAnswer | list[ElicitAnswer] | Callable[[types.ElicitRequestParams], ElicitAnswer | Awaitable[ElicitAnswer]]
)
SampleAnswer: TypeAlias = str | types.CreateMessageResult
#: ``sample=``: the model's reply (a string, or a ``CreateMessageResult``); a list of those, one per question; or a
#: function of the ``CreateMessageRequestParams`` returning one.
Sample: TypeAlias = (
    SampleAnswer
    | list[SampleAnswer]
    | Callable[[types.CreateMessageRequestParams], SampleAnswer | Awaitable[SampleAnswer]]
)
RootAnswer: TypeAlias = str | types.Root
#: ``roots=``: the client's roots (URIs such as ``"file:///home/nour/desk"``, or ``Root``s), or a function of nothing
#: returning them.
Roots: TypeAlias = Sequence[RootAnswer] | Callable[[], Sequence[RootAnswer] | Awaitable[Sequence[RootAnswer]]]

#: The code of the error a client sends back when its answers cannot answer (the test is told why after the call).
_NO_ANSWER = types.INTERNAL_ERROR


@dataclass(frozen=True)
class Question:
    """A question the server asked: ``kind`` (``"elicit"``, ``"sample"`` or ``"roots"``), its ``message`` (what the
    user is asked; for sampling the text of the last message; empty for roots) and the SDK's ``params``."""

    kind: Literal["elicit", "sample", "roots"]
    message: str
    params: Any = None


class Answers:
    """One client's answers, turned into the ``mcp`` client's callbacks; ``asked`` lists the questions in order and
    ``problems`` what the answers could not answer (the client reports them once the call returns)."""

    def __init__(self, elicit: Elicit | None, sample: Sample | None, roots: Roots | None, who: str) -> None:
        self._who = who
        self.asked: list[Question] = []
        self.problems: list[str] = []
        self.replace(elicit, sample, roots)

    @property
    def kinds(self) -> tuple[bool, bool, bool]:
        """Which of elicitation, sampling and roots this client answers (and so declares)."""
        return self._elicit is not None, self._sample is not None, self._roots is not None

    def replace(self, elicit: Elicit | None, sample: Sample | None, roots: Roots | None) -> None:
        """Answer from now on with these (the kinds stay those the client declared when it connected)."""
        self._elicit = _scripted(elicit)
        self._sample = _scripted(sample)
        self._roots = roots

    def take(self, other: Answers) -> None:
        """Answer from now on as ``other`` does (answers of the same kinds), keeping what was asked so far."""
        self._elicit, self._sample, self._roots = other._elicit, other._sample, other._roots

    def callbacks(self) -> dict[str, Any]:
        """The ``mcp.Client`` arguments for what this client can answer (nothing more is declared)."""
        given: dict[str, Any] = {}
        if self._elicit is not None:
            given["elicitation_callback"] = self._on_elicit
        if self._sample is not None:
            given["sampling_callback"] = self._on_sample
        if self._roots is not None:
            given["list_roots_callback"] = self._on_roots
        return given

    async def _on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.asked.append(Question("elicit", params.message, params))
        answer = await self._answer("elicit", self._elicit, params)
        if isinstance(answer, types.ErrorData):
            return answer
        if isinstance(answer, types.ElicitResult):
            return answer
        if answer in ("decline", "cancel"):
            return types.ElicitResult(action=answer)
        if isinstance(answer, Mapping):
            return types.ElicitResult(action="accept", content=dict(answer))
        return self._wrong("elicit", answer, "a dict (accept with it), 'decline', 'cancel' or an ElicitResult")

    async def _on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        last = params.messages[-1].content if params.messages else None
        self.asked.append(Question("sample", getattr(last, "text", ""), params))
        answer = await self._answer("sample", self._sample, params)
        if isinstance(answer, types.ErrorData | types.CreateMessageResult):
            return answer
        if isinstance(answer, str):
            content = types.TextContent(type="text", text=answer)
            return types.CreateMessageResult(role="assistant", content=content, model="call_as")
        return self._wrong("sample", answer, "a string (the model's reply) or a CreateMessageResult")

    async def _on_roots(self, context: Any) -> types.ListRootsResult | types.ErrorData:
        self.asked.append(Question("roots", ""))
        given = self._roots
        try:
            listed: Any = given() if callable(given) else given
            if inspect.isawaitable(listed):
                listed = await listed
            roots = [types.Root.model_validate({"uri": root}) if isinstance(root, str) else root for root in listed]
            return types.ListRootsResult(roots=roots)
        except Exception as exc:
            return self._refuse(f"roots= could not answer: {type(exc).__name__}: {exc}")

    async def _answer(self, kind: str, given: Any, params: Any) -> Any:
        if isinstance(given, _Script):
            if not given.left:
                return self._refuse(
                    f"the server asked a {_ordinal(given.count + 1)} {kind} question, and {kind}= has "
                    f"{given.count} answer{'s' if given.count != 1 else ''}: {getattr(params, 'message', '')!r:.200}"
                )
            return given.next()
        if callable(given):
            try:
                answer = given(params)
                return await answer if inspect.isawaitable(answer) else answer
            except Exception as exc:
                return self._refuse(f"{kind}= raised {type(exc).__name__}: {exc}")
        return given

    def _wrong(self, kind: str, answer: object, expected: str) -> types.ErrorData:
        return self._refuse(f"{kind}= gave {answer!r:.80}, which is not {expected}")

    def _refuse(self, problem: str) -> types.ErrorData:
        self.problems.append(f"{self._who}: {problem}")
        return types.ErrorData(code=_NO_ANSWER, message=f"The test client could not answer: {problem}")


class _Script:
    """Answers given as a list: one per question, in order."""

    def __init__(self, answers: Sequence[Any]) -> None:
        self.left = list(answers)
        self.count = len(self.left)

    def next(self) -> Any:
        return self.left.pop(0)


def _scripted(given: Any) -> Any:
    return _Script(given) if isinstance(given, list) else given


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
