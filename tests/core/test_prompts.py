"""Prompts and completion (issue 12): arguments from ``render``'s signature, a string or a list of messages (text,
image, embedded resource), arguments converted and checked, the caller's memory inside, completion of prompt
arguments and template parameters — through the real HTTP stack and the official client in both eras."""

from __future__ import annotations

import base64
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import MCPError
from pydantic import Field

from mcpkit import (
    ConfigurationError,
    PromptContext,
    ResourceContext,
    Server,
    StaticKeys,
    ToolContext,
    app,
    prompt,
    resource,
    tool,
)
from mcpkit.completion._completion import MAX_VALUES
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
PROTOCOLS = ["2026-07-28", "2025-11-25"]
TICKETS = ["T-100", "T-101", "T-200"]
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


@tool(name="set_signature", description="Set your signature.")
class SetSignature(ToolContext):
    async def execute(self, signature: str) -> str:
        await self.remember.set("signature", signature, scope="user")
        return signature


@prompt(name="reply_to_ticket", description="Draft a reply to a ticket, in your voice.")
class ReplyToTicket(PromptContext):
    async def render(
        self,
        ticket_id: Annotated[str, Field(description="The ticket, like T-100.")],
        tone: Annotated[str, Field(description="friendly or formal")] = "friendly",
    ) -> str:
        signature = await self.remember.get("signature", scope="user", default="The Help Desk")
        return f"Write a {tone} reply to {ticket_id}, signed {signature}."

    async def complete_ticket_id(self, value: str) -> list[str]:
        return [ticket for ticket in TICKETS if ticket.startswith(value)]

    async def complete_tone(self, value: str, arguments: dict[str, str]) -> list[str]:
        tones = ["friendly", "formal"] + (["apologetic"] if arguments.get("ticket_id") == "T-200" else [])
        return [tone for tone in tones if tone.startswith(value)]


@prompt(name="review_screenshot")
class ReviewScreenshot(PromptContext):
    """Look at a screenshot and the ticket it belongs to."""

    async def render(self, ticket_id: str, attempts: int = 1) -> list[Any]:
        return [
            f"Ticket {ticket_id}, attempt {attempts}: what does the screenshot show?",
            types.PromptMessage(
                role="user", content=types.ImageContent(type="image", data=PIXEL, mime_type="image/png")
            ),
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {"uri": f"tickets://{ticket_id}", "mimeType": "text/plain", "text": "opened today"},
                },
            },
            {"role": "assistant", "content": {"type": "text", "text": "I will look."}},
        ]


@prompt(name="many_completions", description="Has a parameter with many candidates.")
class ManyCompletions(PromptContext):
    async def render(self, word: str) -> str:
        return word

    async def complete_word(self, value: str) -> list[str]:
        return [f"{value}{number}" for number in range(MAX_VALUES + 20)]


@prompt(name="broken", description="Fails.")
class Broken(PromptContext):
    async def render(self) -> str:
        raise RuntimeError("internal detail 42")


@resource(uri="tickets://{ticket_id}", name="ticket")
class Ticket(ResourceContext):
    async def read(self, ticket_id: str) -> str:
        return ticket_id

    async def complete_ticket_id(self, value: str) -> list[str]:
        return [ticket for ticket in TICKETS if ticket.startswith(value)]


@app(
    id="desk",
    tools=[SetSignature],
    resources=[Ticket],
    prompts=[ReplyToTicket, ReviewScreenshot, ManyCompletions, Broken],
    plugins=[RememberPlugin.init(type="memory")],
)
class DeskApp: ...


def make_server() -> Server:
    return Server([DeskApp], auth=StaticKeys(KEYS))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_prompts_are_listed_with_their_arguments(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        listed = {p.name: p for p in await call_as("nour").list_prompts()}
    assert sorted(listed) == ["broken", "many_completions", "reply_to_ticket", "review_screenshot"]
    reply = listed["reply_to_ticket"]
    assert reply.description == "Draft a reply to a ticket, in your voice."
    assert [(a.name, a.required, a.description) for a in reply.arguments or []] == [
        ("ticket_id", True, "The ticket, like T-100."),
        ("tone", False, "friendly or formal"),
    ]
    assert listed["review_screenshot"].description == "Look at a screenshot and the ticket it belongs to."


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_prompt_renders_for_the_caller(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        nour, sam = call_as("nour"), call_as("sam")
        await nour.call("set_signature", {"signature": "Nour, tier 2"})
        mine = await nour.get_prompt("reply_to_ticket", {"ticket_id": "T-100", "tone": "formal"})
        theirs = await sam.get_prompt("reply_to_ticket", {"ticket_id": "T-100"})
    assert mine.description == "Draft a reply to a ticket, in your voice."
    assert [m.role for m in mine.messages] == ["user"]
    assert mine.messages[0].content == types.TextContent(
        type="text", text="Write a formal reply to T-100, signed Nour, tier 2."
    )
    assert theirs.messages[0].content == types.TextContent(
        type="text", text="Write a friendly reply to T-100, signed The Help Desk."
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_prompt_can_answer_text_image_and_embedded_resource_messages(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        rendered = await call_as("nour").get_prompt("review_screenshot", {"ticket_id": "T-7", "attempts": "3"})
    text, image, embedded, answer = rendered.messages
    assert text.content == types.TextContent(type="text", text="Ticket T-7, attempt 3: what does the screenshot show?")
    assert isinstance(image.content, types.ImageContent)
    assert image.content.data == PIXEL
    assert isinstance(embedded.content, types.EmbeddedResource)
    assert embedded.content.resource == types.TextResourceContents(
        uri="tickets://T-7", mime_type="text/plain", text="opened today"
    )
    assert answer.role == "assistant"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("reply_to_ticket", {}, "Prompt 'reply_to_ticket': ticket_id: Field required."),
        ("review_screenshot", {"ticket_id": "T-1", "attempts": "many"}, "attempts: Input should be a valid integer"),
        ("reply_to_ticket", {"ticket_id": "T-1", "mood": "x"}, "mood: Extra inputs are not permitted"),
        ("no_such_prompt", {}, "There is no prompt named 'no_such_prompt'"),
    ],
)
async def test_bad_arguments_and_unknown_prompts_are_minus_32602(
    protocol: str, name: str, arguments: dict[str, str], message: str
) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        with pytest.raises(MCPError) as refused:
            await call_as("nour").get_prompt(name, arguments)
    assert refused.value.error.code == types.INVALID_PARAMS
    assert message in refused.value.error.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_prompt_that_fails_says_so_without_its_internals(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        with pytest.raises(MCPError) as refused:
            await call_as("nour").get_prompt("broken")
    assert refused.value.error.code == types.INTERNAL_ERROR
    assert refused.value.error.message == "Rendering prompt 'broken' failed on the server."


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_completion_of_prompt_arguments_and_template_parameters(protocol: str) -> None:
    prompt_ref = types.PromptReference(type="ref/prompt", name="reply_to_ticket")
    async with running(make_server(), protocol=protocol) as call_as:
        nour = call_as("nour")
        assert (await nour.complete(prompt_ref, "ticket_id", "T-1")).values == ["T-100", "T-101"]
        assert (await nour.complete(prompt_ref, "tone", "")).values == ["friendly", "formal"]
        with_context = await nour.complete(prompt_ref, "tone", "", {"ticket_id": "T-200"})
        assert with_context.values == ["friendly", "formal", "apologetic"]
        template_ref = types.ResourceTemplateReference(type="ref/resource", uri="tickets://{ticket_id}")
        assert (await nour.complete(template_ref, "ticket_id", "T-2")).values == ["T-200"]
        many = await nour.complete(types.PromptReference(type="ref/prompt", name="many_completions"), "word", "w")
        assert (len(many.values), many.total, many.has_more) == (MAX_VALUES, MAX_VALUES + 20, True)
        nothing = await nour.complete(types.PromptReference(type="ref/prompt", name="broken"), "x", "")
        assert (nothing.values, nothing.has_more) == ([], False)  # nothing to complete: empty, as the spec allows
        with pytest.raises(MCPError) as refused:
            await nour.complete(types.PromptReference(type="ref/prompt", name="nope"), "x", "")
        assert refused.value.error.code == types.INVALID_PARAMS


class NotDecorated(PromptContext):
    async def render(self) -> str:
        return ""


@prompt(name="has spaces")
class BadName(PromptContext):
    async def render(self) -> str:
        return ""


@prompt(name="no_render")
class NoRender(PromptContext):
    pass


@prompt(name="twice")
class Twice(PromptContext):
    async def render(self) -> str:
        return ""


@prompt(name="twice")
class TwiceAgain(PromptContext):
    async def render(self) -> str:
        return ""


@prompt(name="bad_completer")
class BadCompleter(PromptContext):
    async def render(self, word: str) -> str:
        return word

    async def complete_word(self, value: str, context: dict[str, str], extra: int) -> list[str]:
        return []


@prompt(name="untyped")
class Untyped(PromptContext):
    async def render(self, word) -> str:  # type: ignore[no-untyped-def]
        return str(word)


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ((NotDecorated,), "is not a prompt: decorate it with @prompt(name=...)"),
        ((BadName,), "prompt name 'has spaces' is not valid"),
        ((NoRender,), "needs `async def render(self, ...)`"),
        ((Twice, TwiceAgain), "Two prompts are named 'twice'"),
        ((BadCompleter,), "complete_word() takes (self, value) or (self, value, arguments)"),
        ((Untyped,), "render() parameter 'word' needs a type annotation"),
    ],
)
def test_mistakes_are_refused_when_the_server_is_built(classes: tuple[type[Any], ...], message: str) -> None:
    @app(id="x", prompts=list(classes))
    class XApp: ...

    with pytest.raises(ConfigurationError) as refused:
        Server([XApp], auth=StaticKeys(KEYS))
    assert message in str(refused.value)
