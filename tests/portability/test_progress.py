"""Issue 39, item 2: an import shows a bar with a total (the file's bytes read) on a terminal, and plain lines at
each tenth when its standard error is not one; an export, a count."""

from __future__ import annotations

import io
import os
import pty
import subprocess
from pathlib import Path

from mcpkit import ManualClock
from mcpkit_storage._progress import PLAIN_STEP, Progress
from portability.support import mem, served
from portability.test_commands import MCPKIT, remember

SECRET = "progress-secret-0123456789abcdef"


def test_without_a_terminal_a_plain_line_says_each_tenth_once() -> None:
    out, read = io.StringIO(), [0]
    progress = Progress("imported", out, terminal=False, total=1000, done=lambda: read[0])
    for count, position in [(10, 50), (20, 99), (30, 100), (40, 350), (50, 360), (100, 1000)]:
        read[0] = position
        progress(count)
    progress.close()

    assert out.getvalue().splitlines() == [
        "imported 30 values (10%)",
        "imported 40 values (30%)",
        "imported 100 values (100%)",
    ]


def test_without_a_total_a_plain_line_comes_every_step_of_values() -> None:
    out = io.StringIO()
    progress = Progress("exported", out, terminal=False)
    for count in (512, PLAIN_STEP - 1, PLAIN_STEP, PLAIN_STEP + 512, 2 * PLAIN_STEP + 1):
        progress(count)

    assert out.getvalue().splitlines() == [f"exported {PLAIN_STEP:,} values", f"exported {2 * PLAIN_STEP + 1:,} values"]


def test_a_terminal_gets_one_line_redrawn_with_a_bar_ending_full() -> None:
    out, read = io.StringIO(), [0]
    progress = Progress("imported", out, terminal=True, total=200, done=lambda: read[0])
    read[0] = 200
    progress(7)
    progress.close()

    text = out.getvalue()
    assert text.endswith("\n")
    assert text.count("\n") == 1  # one line, drawn over with carriage returns
    assert f"[{'#' * 30}] 100% 7 values" in text


def on_a_terminal(*args: str, secret: str) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """``mcpkit remember ARGS`` with standard error on a pseudo-terminal: what it did, and what the terminal showed."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")} | {"REMEMBER_SECRET": secret}
    try:
        done = subprocess.run(
            [MCPKIT, "remember", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    return done, shown


async def test_the_import_command_draws_its_bar_on_a_terminal(tmp_path: Path) -> None:
    clock = ManualClock()
    source, target, file = tmp_path / "source.db", tmp_path / "target.db", tmp_path / "all.jsonl"
    async with served(source, SECRET, clock) as call_as:
        for number in range(300):  # 600 records, each note and its change history (the default): three chunks
            await mem(call_as, "nour", "set", key=f"n{number}", value=f"note {number}", scope="user")
    assert remember(
        "export", "--store", f"sqlite:///{source}", "--all", "--plaintext", "--out", str(file), secret=SECRET
    )
    done, shown = on_a_terminal(
        "import", "--store", f"sqlite:///{target}", "--create", "--plaintext", str(file), secret=SECRET
    )

    assert done.returncode == 0, shown
    assert b"imported 300 values and 300 change histories" in done.stdout
    assert b"] 100% 600 values" in shown
