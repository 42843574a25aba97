"""``CallerClient``: one caller's MCP connection to an in-process server, over real HTTP semantics."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx2
import mcp_types as types
from mcp import Client, MCPError
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from starlette.types import ASGIApp

from ..base import ERROR_META_KEY
from ..ui import EXTENSION, MIME_TYPE
from ._answers import Answers, Question
from ._heard import Heard, LogMessage, Progress
from ._holder import Holder
from ._tasks import TasksExtension, TaskStarted, ToolTask
from ._transport import StreamingASGITransport
from ._views import ShownView, shown_view

__all__ = ["PROTOCOLS", "CallerClient", "HTTPRefusedError", "ToolCallError", "error_code"]

#: The two protocol eras mcpkit serves, newest first.
PROTOCOLS = ("2026-07-28", "2025-11-25")

_URL = "http://127.0.0.1:8000/mcp"
#: How often a test client polls a task: the server runs in-process, on the same loop, and answers at once.
_TASK_POLL_SECONDS = 0.005
#: The code the ``mcp`` client gives a refusal whose body is not a JSON-RPC error ("Server returned an error response").
_NO_JSON_RPC_CODE = types.INTERNAL_ERROR

T = TypeVar("T")


class ToolCallError(Exception):
    """A tool call came back as an error result; ``code`` is mcpkit's error code."""

    def __init__(self, code: str | None, message: str, result: types.CallToolResult) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.result = result


class HTTPRefusedError(MCPError):
    """The server's HTTP layer refused a request before any tool ran, the same in both eras.

    ``status`` is the HTTP status (401, 404, 413, ...), ``description`` the server's reason (the
    ``error_description`` of a 401, the message of a JSON-RPC error, or the body's text) and
    ``headers`` the response's headers (``WWW-Authenticate`` on a 401). It is an ``MCPError``, the
    ``mcp`` client's own exception, with the JSON-RPC code of the response when it had one.
    """

    def __init__(self, status: int, description: str, code: int, headers: Mapping[str, str]) -> None:
        super().__init__(code, f"HTTP {status}: {description}")
        self.status = status
        self.description = description
        self.headers = dict(headers)


def error_code(result: types.CallToolResult) -> str | None:
    """The ``_meta["mcpkit/error"]["code"]`` of an error result, or None."""
    error = (result.meta or {}).get(ERROR_META_KEY)
    return error.get("code") if isinstance(error, dict) else None


class CallerClient:
    """Calls tools as one caller, through the real ASGI app with a real ``Authorization`` header.

    On 2025-11-25 the connection (and so the MCP session) lasts until the fixture
    ends; on 2026-07-28 every call is its own request, as with any client. It answers
    the server's questions with its ``answers`` (declaring only those capabilities),
    declares the tasks extension when ``tasks`` is set and the MCP Apps one when ``ui`` is, and keeps what it heard.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        protocol: str,
        name: str,
        answers: Answers | None = None,
        *,
        tasks: bool = False,
        ui: bool = False,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
        self.name = name
        self.protocol = protocol
        self.tasks = tasks
        self.ui = ui
        self._app = app
        self._token = token
        self._answers = answers or Answers(None, None, None, name)
        self._heard = Heard()
        self._holder: Holder[Client] | None = None
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._refusals = 0
        self._refusal: tuple[int, str, int, dict[str, str]] | None = None

    def __repr__(self) -> str:
        return f"<CallerClient {self.name} on {self.protocol}>"

    def answer_with(self, answers: Answers) -> None:
        """Answer the server's questions with ``answers`` from now on (of the kinds this client declared)."""
        if answers.kinds != self._answers.kinds:
            raise ValueError(f"{self.name} declared {self._answers.kinds}; these answers are {answers.kinds}")
        self._answers.take(answers)

    @property
    def asked(self) -> list[Question]:
        """Every question the server asked this client (``self.elicit``, ``self.sample``, ``self.roots``), in order."""
        return self._answers.asked

    @property
    def progress(self) -> list[Progress]:
        """Every progress notification of this client's calls, in order: ``(progress, total, message)``."""
        return self._heard.progress

    @property
    def logs(self) -> list[LogMessage]:
        """Every log message the server sent this client (all levels, in both eras): ``(level, data, logger)``."""
        return self._heard.logs

    @property
    def notifications(self) -> list[types.ServerNotification]:
        """Every notification the server sent this client (log messages, list changes, resource updates, ...)."""
        return self._heard.notifications

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token is not None else {}
        modern = self.protocol == "2026-07-28"
        http = httpx2.AsyncClient(
            transport=StreamingASGITransport(self._app),
            headers=headers,
            timeout=30,
            event_hooks={"response": [self._note_refusal]},
        )
        client = Client(
            streamable_http_client(_URL, http_client=http),
            mode="2026-07-28" if modern else "legacy",
            log_level="debug" if modern else None,  # 2026-07-28 asks per request; 2025-11-25 hears every level
            logging_callback=self._heard.on_log,
            message_handler=self._heard.on_message,
            extensions=[
                *([TasksExtension(poll_interval=_TASK_POLL_SECONDS)] if self.tasks else []),
                *([advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})] if self.ui else []),
            ]
            or None,
            **self._answers.callbacks(),
        )
        async with http, client:
            yield client

    def _reported(self, seen: int) -> None:
        """Raise what the client's answers could not answer during the call that just ended (the test's mistake)."""
        problems = self._answers.problems[seen:]
        if problems:
            raise AssertionError("; ".join(problems))

    async def _note_refusal(self, response: httpx2.Response) -> None:
        """Keep the last HTTP refusal: the ``mcp`` client's exception does not carry its status."""
        if response.status_code >= 400:
            await response.aread()
            self._refusals += 1
            self._refusal = (response.status_code, *_reason(response), dict(response.headers))

    async def _refused_as_http(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run ``operation``; if the client raised because the HTTP layer refused it, raise HTTPRefusedError.

        On 2026-07-28 the client raises ``MCPError``; on 2025-11-25 the same error arrives inside an
        ``ExceptionGroup`` from the client's task group. Both become the one ``HTTPRefusedError``.
        """
        seen = self._refusals
        try:
            return await operation()
        except Exception as exc:
            refusal = self._refusal
            if self._refusals == seen or refusal is None or not _holds_mcp_error(exc):
                raise
            status, description, code, headers = refusal
            raise HTTPRefusedError(status, description, code, headers) from exc

    async def _session(self) -> Client:
        async with self._lock:
            if self._client is None:
                self._holder = Holder(self._connect)
                self._client = await self._refused_as_http(self._holder.open)
            return self._client

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """The raw MCP result of calling ``name``; ``HTTPRefusedError`` if the HTTP layer refused the request."""
        client = await self._session()
        seen = len(self._answers.problems)
        try:
            return await self._refused_as_http(
                lambda: client.call_tool(name, dict(arguments or {}), progress_callback=self._heard.on_progress)
            )
        finally:
            self._reported(seen)

    async def start_task(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolTask:
        """Call ``name`` as a task and return it, to poll, answer and cancel by hand (``call_as(..., tasks=True)``,
        2026-07-28); an ``AssertionError`` if the call answered in the request instead."""
        if not self.tasks:
            raise ValueError(
                f"start_task() needs a client that declares the tasks extension: call_as({self.name!r}, tasks=True)."
            )
        client = await self._session()
        started = await self._refused_as_http(
            lambda: client.session.call_tool(
                name, dict(arguments or {}), progress_callback=self._heard.on_progress, allow_claimed=True
            )
        )
        if not isinstance(started, TaskStarted):
            raise AssertionError(
                f"{name} answered in the request ({self.protocol}), not with a task: {started!r:.300}. Tasks need "
                "protocol 2026-07-28 and a tool with @tool(task=True) or task='required'."
            )
        return ToolTask(client.session, started, _TASK_POLL_SECONDS)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """The tool's structured result (or its text); raises ``ToolCallError`` for an error result."""
        result = await self.call_tool(name, arguments)
        text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
        if result.is_error:
            raise ToolCallError(error_code(result), text, result)
        if result.structured_content is not None:
            return result.structured_content
        return text

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server lists to this caller, all pages."""
        client = await self._session()
        return await self._refused_as_http(lambda: self._all_pages(client.list_tools, "tools"))

    async def list_resources(self) -> list[types.Resource]:
        """Every resource the server lists, all pages."""
        client = await self._session()
        return await self._all_pages(client.list_resources, "resources")

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        """Every resource template the server lists, all pages."""
        client = await self._session()
        return await self._all_pages(client.list_resource_templates, "resource_templates")

    async def list_prompts(self) -> list[types.Prompt]:
        """Every prompt the server lists, all pages."""
        client = await self._session()
        return await self._all_pages(client.list_prompts, "prompts")

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The raw result of ``resources/read``; the SDK's ``MCPError`` for a JSON-RPC error (not found: -32602)."""
        client = await self._session()
        return await client.read_resource(uri, cache_mode="bypass")

    async def read(self, uri: str) -> str | bytes:
        """The one content of ``uri``: its text, or its blob decoded."""
        contents = (await self.read_resource(uri)).contents
        if len(contents) != 1:
            raise AssertionError(f"{uri} has {len(contents)} contents; use read_resource() for several")
        content = contents[0]
        return content.text if isinstance(content, types.TextResourceContents) else base64.b64decode(content.blob)

    async def view_of(self, tool: str) -> ShownView:
        """The view ``tool`` is shown in, as this client's host would load it: the tool as listed, then its
        ``ui://`` resource read (an ``AssertionError`` saying why when there is none)."""
        return await shown_view(self, tool)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> types.GetPromptResult:
        """The raw result of ``prompts/get``; the SDK's ``MCPError`` for a JSON-RPC error (-32602: bad arguments)."""
        client = await self._session()
        return await client.get_prompt(name, dict(arguments or {}))

    async def complete(
        self,
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: str,
        value: str,
        arguments: Mapping[str, str] | None = None,
    ) -> types.Completion:
        """``completion/complete`` of ``argument`` (typed so far: ``value``) of a prompt or resource template."""
        client = await self._session()
        context = dict(arguments) if arguments else None
        return (await client.complete(ref, {"name": argument, "value": value}, context)).completion

    async def _all_pages(self, fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        while True:
            listed = await fetch(cursor=cursor, cache_mode="bypass")
            items += getattr(listed, field)
            cursor = listed.next_cursor
            if cursor is None:
                return items

    async def aclose(self) -> None:
        holder, self._holder, self._client = self._holder, None, None
        if holder is not None:
            await holder.close()


def _reason(response: httpx2.Response) -> tuple[str, int]:
    """The server's description of a refusal, and its JSON-RPC code (the client's own when it has none)."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase, _NO_JSON_RPC_CODE
    if isinstance(body, dict):
        if isinstance(body.get("error_description"), str):
            return body["error_description"], _NO_JSON_RPC_CODE
        error = body.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        if isinstance(data, dict) and isinstance(data.get("error_description"), str):  # the auth gate's refusals
            return data["error_description"], _NO_JSON_RPC_CODE
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            return error["message"], code if isinstance(code, int) else _NO_JSON_RPC_CODE
    return response.text.strip()[:500], _NO_JSON_RPC_CODE


def _holds_mcp_error(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(MCPError) is not None
    return isinstance(exc, MCPError)
