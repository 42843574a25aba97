"""A task whose instance is killed (SIGKILL: no shutdown code runs) is reported failed by another instance sharing
its SQLite file, once the lease the dead instance kept renewing has lapsed; it is never left "working"."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx2

from mcpkit_remember import RememberPlugin
from tasks.support import ALICE, KEYS, SECRET, Caller, build, serving

#: The killed instance: one task tool that sleeps for an hour, tasks kept in a SQLite file, a 0.5 s lease.
SERVED = textwrap.dedent(
    f'''
    """A task instance the test kills."""

    import asyncio

    from mcpkit import Server, StaticKeys, ToolContext, app, tool
    from mcpkit_remember import RememberPlugin


    @tool(name="held", description="Sleeps for an hour, as a task.", task=True)
    class Held(ToolContext):
        async def execute(self, gate: str) -> str:
            await asyncio.sleep(3600)
            return gate


    @app(id="tasks", tools=[Held], plugins=[RememberPlugin.init(type="sqlite", path="tasks.db", secret={SECRET!r})])
    class TasksApp: ...


    server = Server([TasksApp], auth=StaticKeys({KEYS!r}), task_lease=0.5)
    '''
)
START_SECONDS = 20.0
LAPSE_SECONDS = 30.0


def start(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    (tmp_path / "killed.py").write_text(SERVED)
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", "killed.py:server", "--port", "0", "--log-level", "warning"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_SECONDS)
    assert ready, f"mcpkit run printed nothing within {START_SECONDS:g} s"
    url = process.stdout.readline().split(" at ", 1)[1].split(" ", 1)[0]
    return process, int(url.rsplit(":", 1)[1].split("/", 1)[0])


async def test_a_task_whose_instance_was_killed_is_reported_failed_through_another(tmp_path: Path) -> None:
    process, port = start(tmp_path)
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            task_id = await Caller(http, ALICE).start("held", {"gate": "killed"})
            assert (await Caller(http, ALICE).get(task_id)).result["status"] == "working"  # type: ignore[index]
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    plugin = RememberPlugin.init(type="sqlite", path=str(tmp_path / "tasks.db"), secret=SECRET)
    async with serving(build(plugin, task_lease=0.5)) as other:
        alice = Caller(other, ALICE)
        # A real process gives no clock to move: poll until the dead lease (0.5 s) lapses, within a generous bound.
        async with asyncio.timeout(LAPSE_SECONDS):
            reply = await alice.get(task_id)
            while reply.result is not None and reply.result["status"] == "working":
                await asyncio.sleep(0.1)
                reply = await alice.get(task_id)
    assert reply.result is not None, reply.error
    assert reply.result["status"] == "failed"
    assert "stopped before it finished" in reply.result["error"]["message"]
