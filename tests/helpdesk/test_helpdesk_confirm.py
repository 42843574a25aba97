"""``send_reply`` asks the agent to confirm when the client can be asked (issue 12), and sends as the tutorial did
when it cannot; the draft goes only once the agent said yes, and stays when they said no. Through the fixtures
(issue 36), in both eras: on 2025-11-25 the question is a live request on the call's stream, on 2026-07-28 a round."""

from __future__ import annotations

import pytest

from mcpkit.testing import CallAs, CallerClient, Question

DRAFT = {"ticketId": "T-4", "text": "Your refund is on its way."}
ASKED = "Send this reply to T-4?\n\nYour refund is on its way."


async def save_and_send(agent: CallerClient) -> tuple[object, object]:
    await agent.call("save_draft", DRAFT)
    sent = await agent.call("send_reply", {"ticketId": "T-4"})
    left = await agent.call("get_draft", {"ticketId": "T-4"})
    return sent, left


async def test_the_agent_confirms_and_the_reply_is_sent_once(call_as: CallAs) -> None:
    nour = call_as("nour", elicit={"confirm": True})

    sent, left = await save_and_send(nour)

    assert sent == {"sent": True, "text": "Your refund is on its way."}
    assert left == {"draft": None}
    assert [(question.kind, question.message) for question in nour.asked] == [("elicit", ASKED)]


@pytest.mark.parametrize("answer", [{"confirm": False}, "decline", "cancel"])
async def test_a_no_a_decline_or_a_dismissal_keeps_the_draft(call_as: CallAs, answer: object) -> None:
    nour = call_as("nour", elicit=answer)  # type: ignore[arg-type]

    sent, left = await save_and_send(nour)

    assert sent == {"sent": False}
    assert left == {"draft": "Your refund is on its way."}
    assert len(nour.asked) == 1


async def test_the_question_carries_a_schema_the_agent_can_answer_in_a_form(call_as: CallAs) -> None:
    nour = call_as("nour", elicit=lambda params: {"confirm": "refund" in params.message})

    sent, _ = await save_and_send(nour)

    [question] = nour.asked
    assert isinstance(question, Question)
    assert question.params.requested_schema["properties"] == {"confirm": {"title": "Confirm", "type": "boolean"}}
    assert sent == {"sent": True, "text": "Your refund is on its way."}


async def test_a_client_that_cannot_be_asked_sends_as_the_tutorial_did(call_as: CallAs) -> None:
    nour = call_as("nour")  # answers nothing, so declares no elicitation

    sent, left = await save_and_send(nour)

    assert sent == {"sent": True, "text": "Your refund is on its way."}
    assert left == {"draft": None}
    assert nour.asked == []


async def test_a_second_question_the_test_did_not_script_fails_the_call_saying_so(call_as: CallAs) -> None:
    nour = call_as("nour", elicit=[{"confirm": False}])
    await nour.call("save_draft", DRAFT)
    assert await nour.call("send_reply", {"ticketId": "T-4"}) == {"sent": False}

    with pytest.raises(AssertionError, match=r"asked a 2nd elicit question, and elicit= has 1 answer: 'Send this"):
        await nour.call("send_reply", {"ticketId": "T-4"})
