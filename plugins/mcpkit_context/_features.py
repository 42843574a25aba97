"""The context plugin's tools, resource and prompt: ``set_context``, ``search_context``, ``load_context``, the
resource template ``context://{block}`` and the prompt ``system_prompt``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from mcpkit import PromptContext, ResourceContext, ResourceNotFoundError, ToolContext, prompt, resource, tool

from ._blocks import Block
from ._errors import ContextNotFoundError

__all__ = ["context_prompts", "context_resources", "context_tools"]

BlockName = Annotated[
    str, Field(min_length=1, max_length=64, description="The block's name, as the system prompt shows.")
]
_WHOSE = "Blocks you write belong to the signed-in user and last across conversations."


def context_tools(blocks: Mapping[str, Block]) -> list[type[ToolContext]]:
    kinds = {type(block).__name__ for block in blocks.values()}
    tools: list[type[ToolContext]] = []
    if kinds & {"WritableBlock", "SearchableBlock"}:

        @tool(
            name="set_context",
            description=(
                "Write a context block: a writable block's text (mode 'replace' sets it, 'append' adds content as a "
                "new line after it; within its token budget, the result says how many tokens are left), or one entry "
                "of a searchable block (give key). " + _WHOSE
            ),
        )
        class SetContext(ToolContext):
            async def execute(
                self,
                block: BlockName,
                content: Annotated[str, Field(max_length=65_536)],
                mode: Annotated[
                    Literal["replace", "append"],
                    Field(description="'replace': content becomes the text; 'append': content goes on a new line."),
                ] = "replace",
                key: Annotated[str | None, Field(max_length=128)] = None,
            ) -> dict[str, Any]:
                written: dict[str, Any] = await self.context.set(block, content, mode=mode, key=key)
                return written

        tools.append(SetContext)
    if "SearchableBlock" in kinds:

        @tool(
            name="search_context",
            description="Search a searchable context block's entries, best first. " + _WHOSE,
            read_only=True,
        )
        class SearchContext(ToolContext):
            async def execute(
                self,
                block: BlockName,
                query: Annotated[str, Field(min_length=1, max_length=1000)],
                limit: Annotated[int, Field(ge=1, le=100)] = 5,
            ) -> dict[str, Any]:
                return {"block": block, "results": await self.context.search(block, query, limit=limit)}

        tools.append(SearchContext)
    if "LoadableBlock" in kinds:

        @tool(
            name="load_context",
            description=(
                "Load one whole document of a loadable context block (the system prompt lists their keys, titles "
                "and descriptions): a runbook, a guide, a checklist."
            ),
            read_only=True,
        )
        class LoadContext(ToolContext):
            async def execute(self, block: BlockName, key: Annotated[str, Field(max_length=64)]) -> dict[str, Any]:
                loaded: dict[str, Any] = await self.context.load(block, key)
                return loaded

        tools.append(LoadContext)
    return tools


def context_resources(blocks: Mapping[str, Block]) -> list[type[Any]]:
    @resource(
        uri="context://{block}",
        name="context_block",
        description="One context block as the system prompt shows it (the caller's own for writable ones).",
        mime_type="text/plain",
    )
    class ContextBlock(ResourceContext):
        async def read(self, block: str) -> str:
            try:
                return str(await self.context.render_block(block))
            except ContextNotFoundError as exc:  # no such block: "not found", as for any URI (not an internal error)
                raise ResourceNotFoundError(exc.message) from None

        async def complete_block(self, value: str) -> list[str]:
            return [name for name in blocks if name.startswith(value)]

    return [ContextBlock]


def context_prompts(blocks: Mapping[str, Block]) -> list[type[Any]]:
    @prompt(
        name="system_prompt",
        description="Every context block rendered for the system prompt: read-only text, writable blocks with "
        "their token use, searchable and loadable listings.",
    )
    class SystemPrompt(PromptContext):
        async def render(self) -> str:
            return str(await self.context.render())

    return [SystemPrompt]
