"""Context blocks (issue 13): read-only, writable with a token budget, searchable and loadable blocks per caller,
through the real HTTP stack in both eras — the three tools, the ``context://{block}`` resource, the
``system_prompt`` prompt, over-budget writes refused, and Nour's blocks never Sam's."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import MCPError

from mcpkit import ConfigurationError, Context, Server, StaticKeys, app
from mcpkit.testing import ToolCallError, error_code, running
from mcpkit_context import ContextPlugin, Document, LoadableBlock, ReadOnlyBlock, SearchableBlock, WritableBlock

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
PROTOCOLS = ["2026-07-28", "2025-11-25"]


async def soul(ctx: Context) -> str:
    return f"You are the help desk's assistant, working for {ctx.caller.label}."


BLOCKS = [
    ReadOnlyBlock("soul", "Who you are", provider=soul),
    WritableBlock("notes", "Facts learned about the customer", max_tokens=20),
    SearchableBlock("knowledge", "Answers to past questions"),
    LoadableBlock(
        "runbooks",
        "Procedures",
        documents={"refunds": Document("Refunds", "How to refund an order", "1. Check the order. 2. Refund it.")},
    ),
]


def desk(**options: Any) -> Server:
    @app(id="desk", plugins=[ContextPlugin.init(BLOCKS, type="memory", **options)])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(KEYS))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_blocks_render_as_the_system_prompt_with_the_callers_own_text(protocol: str) -> None:
    async with running(desk(), protocol=protocol) as call_as:
        nour = call_as("nour")
        tools = [listed.name for listed in await nour.list_tools()]
        written = await nour.call("set_context", {"block": "notes", "content": "Prefers email."})
        appended = await nour.call("set_context", {"block": "notes", "content": "Order 1142.", "mode": "append"})
        await nour.call("set_context", {"block": "knowledge", "key": "kettle", "content": "Kettles: 2-year warranty."})
        prompt = (await nour.get_prompt("system_prompt")).messages[0].content.text  # type: ignore[union-attr]
        sams = (await call_as("sam").get_prompt("system_prompt")).messages[0].content.text  # type: ignore[union-attr]
        block = await nour.read("context://notes")

    assert tools == ["set_context", "search_context", "load_context"]
    assert (written["tokens"], written["max_tokens"], written["left"]) == (4, 20, 16)
    assert appended["tokens"] == 7  # "Prefers email.\nOrder 1142." is 26 bytes: 7 tokens by the estimate
    assert "SOUL (Who you are) [readonly]\n" in prompt
    assert "working for nour." in prompt
    assert "NOTES (Facts learned about the customer) [35% — 7/20 tokens] [writable]" in prompt
    assert "Prefers email.\nOrder 1142." in prompt
    assert "KNOWLEDGE (Answers to past questions) [searchable]" in prompt
    assert "1 entries indexed" in prompt
    assert "- refunds: Refunds — How to refund an order" in prompt
    assert "Prefers email" not in sams
    assert "[0% — 0/20 tokens]" in sams
    assert "0 entries indexed" in sams
    assert isinstance(block, str)
    assert block.startswith("═")
    assert "Order 1142." in block


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_anonymous_caller_is_refused_the_users_blocks_as_a_tool_call_is_never_with_an_internal_error(
    protocol: str,
) -> None:
    @app(id="desk", plugins=[ContextPlugin.init(BLOCKS, type="memory")])
    class Desk: ...

    async with running(Server([Desk], auth=StaticKeys(KEYS), allow_anonymous=True), protocol=protocol) as call_as:
        anonymous = call_as(None)
        with pytest.raises(ToolCallError) as by_tool:
            await anonymous.call("set_context", {"block": "notes", "content": "Prefers email."})
        refused = []
        for uri in ("context://notes", "context://knowledge"):
            with pytest.raises(MCPError) as read:
                await anonymous.read(uri)
            refused.append(read.value.error)
        with pytest.raises(MCPError) as rendered:
            await anonymous.get_prompt("system_prompt")
        shared = await anonymous.read("context://runbooks")  # a block that is nobody's own: read by anyone
        with pytest.raises(MCPError) as unknown:
            await anonymous.read("context://nope")

    assert by_tool.value.code == "REMEMBER_IDENTITY_REQUIRED"
    for error in [*refused, rendered.value.error]:
        assert error.code == types.INVALID_REQUEST  # -32600, as every refusal of the caller; never -32603
        assert error.message == by_tool.value.message
        assert error.data is not None
        assert error.data["code"] == "REMEMBER_IDENTITY_REQUIRED"
    assert "refunds: Refunds" in str(shared)
    assert unknown.value.error.code == types.INVALID_PARAMS
    assert unknown.value.error.message.startswith("Resource not found: context://nope: There is no context block")


async def test_append_puts_content_on_a_line_of_its_own_and_the_tool_says_so() -> None:
    async def after(nour: Any, *writes: tuple[str, str]) -> str:
        for mode, content in writes:
            await nour.call("set_context", {"block": "notes", "content": content, "mode": mode})
        parts = str(await nour.read("context://notes")).split("\n", 3)  # a rule, the heading, a rule, the text
        return parts[3] if len(parts) == 4 else ""

    async with running(desk()) as call_as:
        nour = call_as("nour")
        [set_context] = [listed for listed in await nour.list_tools() if listed.name == "set_context"]
        two_notes = await after(nour, ("replace", "Prefers email."), ("append", "Order 1142."))
        ended_line = await after(nour, ("replace", "Prefers email.\n"), ("append", "Order 1142."))
        from_empty = await after(nour, ("replace", ""), ("append", "Order 1142."))

    # Never "Prefers email.Order 1142.", nor a blank line between the two.
    assert two_notes == ended_line == "Prefers email.\nOrder 1142."
    assert from_empty == "Order 1142."
    assert "'append' adds content as a new line" in (set_context.description or "")
    assert "'append': content goes on a new line" in set_context.input_schema["properties"]["mode"]["description"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_over_budget_write_is_refused_naming_the_budget_and_changes_nothing(protocol: str) -> None:
    async with running(desk(), protocol=protocol) as call_as:
        nour = call_as("nour")
        await nour.call("set_context", {"block": "notes", "content": "Prefers email."})
        with pytest.raises(ToolCallError) as refused:
            await nour.call("set_context", {"block": "notes", "content": "x" * 100, "mode": "append"})
        with pytest.raises(ToolCallError) as read_only:
            await nour.call("set_context", {"block": "soul", "content": "Be rude."})
        kept = await nour.read("context://notes")

    assert error_code(refused.value.result) == "CONTEXT_OVER_BUDGET"
    assert "its budget is 20 (it holds 4 now, so 16 are left)" in str(refused.value)
    assert error_code(read_only.value.result) == "CONTEXT_INVALID"
    assert "it is read-only" in str(read_only.value)
    assert isinstance(kept, str)
    assert "Prefers email." in kept
    assert "xxxx" not in kept


async def test_searchable_entries_are_the_callers_own_and_documents_load_whole() -> None:
    async with running(desk()) as call_as:
        nour, sam = call_as("nour"), call_as("sam")
        await nour.call("set_context", {"block": "knowledge", "key": "kettle", "content": "Kettles: 2-year warranty."})
        await nour.call("set_context", {"block": "knowledge", "key": "toaster", "content": "Toasters: 1 year."})
        await sam.call("set_context", {"block": "knowledge", "key": "kettle", "content": "Sam's kettle note."})
        found = await nour.call("search_context", {"block": "knowledge", "query": "kettle warranties"})
        loaded = await nour.call("load_context", {"block": "runbooks", "key": "refunds"})
        with pytest.raises(ToolCallError) as missing:
            await nour.call("load_context", {"block": "runbooks", "key": "returns"})
        with pytest.raises(ToolCallError) as unknown:
            await nour.call("search_context", {"block": "faq", "query": "x"})

    assert [(hit["key"], hit["content"]) for hit in found["results"]] == [("kettle", "Kettles: 2-year warranty.")]
    assert loaded["content"] == "1. Check the order. 2. Refund it."
    assert error_code(missing.value.result) == "CONTEXT_NOT_FOUND"
    assert "it has: refunds" in str(missing.value)
    assert error_code(unknown.value.result) == "CONTEXT_NOT_FOUND"


async def test_writable_text_survives_a_restart_sealed_in_the_file(tmp_path: Path) -> None:
    options = {"type": "sqlite", "path": tmp_path / "context.db", "secret": "context-secret-0123456789abcdef"}

    def sqlite_desk() -> Server:
        @app(id="desk", plugins=[ContextPlugin.init(BLOCKS, **options)])  # type: ignore[arg-type]
        class Desk: ...

        return Server([Desk], auth=StaticKeys(KEYS))

    async with running(sqlite_desk()) as call_as:
        await call_as("nour").call("set_context", {"block": "notes", "content": "Codename Cedar."})
    async with running(sqlite_desk()) as call_as:
        block = await call_as("nour").read("context://notes")

    assert isinstance(block, str)
    assert "Codename Cedar." in block
    assert b"Cedar" not in read_bytes(tmp_path)


def read_bytes(directory: Path) -> bytes:
    return b"".join(path.read_bytes() for path in directory.iterdir() if path.name.startswith("context.db"))


def test_blocks_are_checked_when_the_plugin_is_built() -> None:
    with pytest.raises(ConfigurationError, match="Two context blocks are named 'notes'"):
        ContextPlugin.init([WritableBlock("notes", "a"), WritableBlock("notes", "b")], type="memory")
    with pytest.raises(ConfigurationError, match="has no description"):
        ContextPlugin.init([WritableBlock("notes", " ")], type="memory")
    with pytest.raises(ConfigurationError, match=re.escape("give content='...' or provider=")):
        ContextPlugin.init([ReadOnlyBlock("soul", "Who")], type="memory")
    with pytest.raises(ConfigurationError, match="max_tokens is a whole number, at least 1"):
        ContextPlugin.init([WritableBlock("notes", "n", max_tokens=0)], type="memory")


async def test_a_tokenizer_of_your_own_counts_the_budget() -> None:
    def words(text: str) -> int:
        return len(text.split())

    async with running(desk(tokenizer=words)) as call_as:
        written = await call_as("nour").call("set_context", {"block": "notes", "content": "one two three"})

    assert written["tokens"] == 3


async def test_a_searchable_block_holds_at_most_max_entries_even_when_written_at_once() -> None:
    blocks = [SearchableBlock("knowledge", "Answers", max_entries=2)]

    @app(id="desk", plugins=[ContextPlugin.init(blocks, type="memory")])
    class Desk: ...

    async with running(Server([Desk], auth=StaticKeys(KEYS))) as call_as:
        nour = call_as("nour")
        outcomes = await asyncio.gather(
            *(
                nour.call("set_context", {"block": "knowledge", "key": f"k{number}", "content": "text"})
                for number in range(5)
            ),
            return_exceptions=True,
        )
        replaced = await nour.call("set_context", {"block": "knowledge", "key": "k0", "content": "new"})

    refused = [outcome for outcome in outcomes if isinstance(outcome, ToolCallError)]
    assert len(refused) == 3
    assert {error_code(error.result) for error in refused} == {"CONTEXT_INVALID"}
    assert replaced["entries"] <= 2


async def test_a_searchable_block_holds_at_most_max_bytes_of_a_callers_entries() -> None:
    blocks = [SearchableBlock("knowledge", "Answers", max_bytes=64 * 1024)]

    @app(id="desk", plugins=[ContextPlugin.init(blocks, type="memory")])
    class Desk: ...

    entry = " ".join(f"word{number}" for number in range(1500))  # about 12 KiB, and 1,500 indexed words
    refusals = []
    async with running(Server([Desk], auth=StaticKeys(KEYS))) as call_as:
        for number in range(8):  # counting their bytes alone, all 8 would fit in 64 KiB
            try:
                await call_as("nour").call("set_context", {"block": "knowledge", "key": f"k{number}", "content": entry})
            except ToolCallError as error:
                refusals.append(error)
        sams = await call_as("sam").call("set_context", {"block": "knowledge", "key": "k0", "content": entry})
        shorter = await call_as("nour").call("set_context", {"block": "knowledge", "key": "k0", "content": "short"})
    assert len(refusals) >= 6
    assert refusals[0].code == "CONTEXT_INVALID"
    assert "65,536 bytes of your entries at most (max_bytes" in refusals[0].message
    assert "replace a long entry by its key" in refusals[0].message
    assert sams["entries"] == 1
    assert shorter["entries"] == 8 - len(refusals)


async def test_the_entry_count_costs_the_same_however_many_entries_a_block_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[int] = [0]
    from mcpkit_storage import Keyring

    open_sealed = Keyring.open

    def counted(self: Keyring, *args: Any) -> Any:
        opened[0] += 1
        return open_sealed(self, *args)

    async with running(desk()) as call_as:
        nour = call_as("nour")
        for number in range(30):
            await nour.call("set_context", {"block": "knowledge", "key": f"k{number}", "content": f"fact {number}"})
        monkeypatch.setattr(Keyring, "open", counted)
        written = await nour.call("set_context", {"block": "knowledge", "key": "k30", "content": "fact 30"})
        at_write = opened[0]
        prompt = (await nour.get_prompt("system_prompt")).messages[0].content.text  # type: ignore[union-attr]
    assert written["entries"] == 31
    assert "31 entries indexed" in prompt
    assert at_write <= 1  # before, every entry was opened to count them: 31
    assert opened[0] <= 4  # the prompt: the writable block's text, not the 31 entries


def test_max_bytes_too_small_for_one_entry_is_refused_when_the_plugin_is_built() -> None:
    with pytest.raises(ConfigurationError, match="max_bytes is a whole number of bytes from 65,536"):
        ContextPlugin.init([SearchableBlock("knowledge", "Answers", max_bytes=1000)], type="memory")
