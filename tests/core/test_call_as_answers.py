"""``call_as`` answers what the server asks (issue 36), in both eras through the real stack — 2025-11-25 live
requests on the call's stream, 2026-07-28 rounds — with scripted answers or handlers, and keeps what it heard:
progress, log messages and every notification."""

from __future__ import annotations

import mcp_types as types
import pytest
from elicitation_server import KEYS, STATE_SECRET, AskApp

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, LogMessage, Progress, Question


@tool(name="export_tickets", description="Export the open tickets, saying how far it got.")
class ExportTickets(ToolContext):
    async def execute(self, count: int = 3) -> str:
        await self.log.debug("opening the export")
        for done in range(1, count + 1):
            await self.progress(done, count, f"ticket {done} of {count}")
        await self.log.warning({"skipped": "T-9"})
        return f"exported {count}"


@app(id="export", tools=[ExportTickets])
class ExportApp: ...


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([AskApp, ExportApp], auth=StaticKeys(KEYS), state_secrets=[STATE_SECRET])


async def test_scripted_answers_answer_each_question_in_order(call_as: CallAs) -> None:
    nour = call_as("nour", elicit=[{"name": "Nour"}, {"confirm": True}])

    assert await nour.call("send_greeting", {"text": "hi"}) == {"sent": True, "by": "Nour"}
    assert [question.message for question in nour.asked if question.kind == "elicit"][-2:] == [
        "Who is sending this?",
        "Send 'hi' as Nour?",
    ]


async def test_a_handler_sees_each_question_and_answers_it(call_as: CallAs) -> None:
    def agent(params: types.ElicitRequestParams) -> object:
        return {"name": "Sam"} if params.message.startswith("Who") else "decline"

    sam = call_as("sam", elicit=agent)

    assert await sam.call("send_greeting", {"text": "hi"}) == {"sent": False, "why": "not confirmed"}


async def test_an_async_handler_answers_too(call_as: CallAs) -> None:
    async def agent(params: types.ElicitRequestParams) -> object:
        return {"name": "Nour"} if params.message.startswith("Who") else {"confirm": True}

    assert await call_as("nour", elicit=agent).call("send_greeting", {"text": "hi"}) == {"sent": True, "by": "Nour"}


async def test_sampling_is_answered_with_the_models_reply(call_as: CallAs) -> None:
    nour = call_as("nour", sample="Short.")

    assert await nour.call("summarise", {"text": "a long thread"}) == "Short."
    [question] = nour.asked
    assert (question.kind, question.message) == ("sample", "Summarise: a long thread")
    assert question.params.system_prompt == "Be brief."


async def test_roots_are_answered_with_the_clients_folders(call_as: CallAs) -> None:
    nour = call_as("nour", roots=["file:///work/desk", types.Root(uri="file:///work/notes", name="notes")])  # type: ignore[arg-type]

    assert await nour.call("where_am_i") == {"result": ["file:///work/desk", "file:///work/notes"]}
    assert nour.asked == [Question("roots", "")]


async def test_questions_asked_together_are_all_answered(call_as: CallAs) -> None:
    nour = call_as("nour", elicit={"name": "Nour"}, roots=lambda: ["file:///work/desk"])

    assert await nour.call("ask_together") == "Nour in 1 root(s)"


async def test_a_client_without_answers_declares_nothing_and_is_not_asked(call_as: CallAs) -> None:
    assert await call_as("nour").call("polite_send") == "sent without asking"
    assert await call_as("nour", elicit={"confirm": False}).call("polite_send") == "kept"


async def test_new_answers_of_the_same_kind_replace_the_old_on_the_same_client(call_as: CallAs) -> None:
    first = call_as("nour", elicit={"confirm": False})
    assert await first.call("polite_send") == "kept"

    again = call_as("nour", elicit={"confirm": True})

    assert again is first
    assert await again.call("polite_send") == "sent"
    assert [question.message for question in again.asked] == ["Send it?", "Send it?"]


async def test_a_handler_that_raises_fails_the_call_with_its_error(call_as: CallAs) -> None:
    def broken(params: types.ElicitRequestParams) -> object:
        raise KeyError("no such answer")

    with pytest.raises(AssertionError, match=r"call_as\('nour'\): elicit= raised KeyError: 'no such answer'"):
        await call_as("nour", elicit=broken).call("polite_send")


async def test_an_answer_of_the_wrong_shape_fails_the_call_saying_what_fits(call_as: CallAs) -> None:
    with pytest.raises(AssertionError, match=r"elicit= gave 42, which is not a dict \(accept with it\), 'decline'"):
        await call_as("nour", elicit=42).call("polite_send")  # type: ignore[arg-type]


async def test_progress_and_log_messages_of_every_level_are_kept_in_order(call_as: CallAs) -> None:
    nour = call_as("nour")

    assert await nour.call("export_tickets", {"count": 2}) == "exported 2"

    assert nour.progress == [(1, 2, "ticket 1 of 2"), (2, 2, "ticket 2 of 2")]
    assert isinstance(nour.progress[0], Progress)
    assert nour.logs == [
        ("debug", "opening the export", "export_tickets"),
        ("warning", {"skipped": "T-9"}, "export_tickets"),
    ]
    assert isinstance(nour.logs[0], LogMessage)
    sent = [note for note in nour.notifications if isinstance(note, types.LoggingMessageNotification)]
    assert [note.params.level for note in sent] == ["debug", "warning"]
