"""The server the per-address tests run (``mcpkit run``): one task tool, anonymous callers, one task a caller."""

from __future__ import annotations

from mcpkit import Server, ToolContext, app, tool


@tool(name="required", description="Runs only as a task.", task="required")
class Required(ToolContext):
    async def execute(self) -> str:
        return "done as a task"


@app(id="tasks", tools=[Required])
class TasksApp: ...


server = Server([TasksApp], allow_anonymous=True, task_limit=1)
