"""Issue 39, item 3: quotas hold on import. A server records its remember quota in its store when it starts, and
``mcpkit remember import`` given only the store holds the file's values to it: whole values in, the rest named by
line, and --max-values/--max-bytes instead for every bucket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpkit import ManualClock, Server, StaticKeys, app
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Quota, record_quotas
from mcpkit_storage.base import recorded_quotas
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from portability.support import KEYS, mem
from portability.test_commands import remember
from remember.tools import TOOLS

SECRET = "quota-import-secret-0123456789abcdef"
NOTES = {f"note-{number}": f"the {number}th note, kept whole: " + "x" * 200 for number in range(5)}


def limited(path: Path, max_values: int) -> Server:
    """The test tools with remember on the SQLite file at ``path``, at most ``max_values`` per owner and bucket."""

    @app(
        id="limited",
        tools=list(TOOLS),
        # history=0: the file's lines are the notes alone, so the quota's count is theirs (a history's: kept_history)
        plugins=[RememberPlugin.init("sqlite", path=path, secret=SECRET, max_values=max_values, history=0)],
    )
    class Limited: ...

    return Server([Limited], auth=StaticKeys(KEYS))


async def notes_of(path: Path, clock: ManualClock) -> dict[str, Any]:
    async with running(limited(path, 100), clock=clock) as call_as:
        return {key: await mem(call_as, "nour", "get", key=key, scope="user") for key in NOTES}


async def test_an_import_holds_the_quota_the_server_recorded_and_names_the_lines_left_out(tmp_path: Path) -> None:
    clock = ManualClock()
    source, target, file = tmp_path / "source.db", tmp_path / "target.db", tmp_path / "all.jsonl"
    async with running(limited(source, 100), clock=clock) as call_as:
        for key, value in NOTES.items():
            await mem(call_as, "nour", "set", key=key, value=value, scope="user")
    assert remember(
        "export", "--store", f"sqlite:///{source}", "--all", "--plaintext", "--out", str(file), secret=SECRET
    )
    async with running(limited(target, 3), clock=clock):
        pass  # the server starts on the new store, and records its quota there

    held = remember("import", "--store", f"sqlite:///{target}", str(file), "--plaintext", secret=SECRET)
    kept = await notes_of(target, clock)
    wider = remember(
        "import", "--store", f"sqlite:///{target}", str(file), "--plaintext", "--max-values", "10", secret=SECRET
    )
    all_kept = await notes_of(target, clock)

    assert held.returncode == 4, held.stderr  # OVER_QUOTA: some values did not fit, the others are in
    assert "imported 3 values" in held.stdout
    assert "2 did not fit their bucket's quota and were not written (lines 5, 6)" in held.stdout
    assert "quotas held per owner and bucket: remember's buckets 3 values" in held.stdout
    whole = {key: value for key, value in kept.items() if value != "<missing>"}
    assert len(whole) == 3
    assert all(value == NOTES[key] for key, value in whole.items())  # each whole (the file's order is the store's)
    assert wider.returncode == 0, wider.stderr
    assert "imported 2 values, 3 already there" in wider.stdout
    assert "every bucket 10 values" in wider.stdout
    assert all_kept == NOTES


async def test_a_restart_with_other_settings_records_them_and_a_note_not_a_servers_is_ignored() -> None:
    store = MemoryStore()
    await store.open()
    await record_quotas(store, {"": Quota(3, None), "memory.": Quota(None, 4096)})
    await record_quotas(store, {"": None, "memory.": Quota(5, 4096)})
    await store.note("quota:crafted.", json.dumps({"values": -1, "bytes": None}))
    await store.note("quota:broken.", "not json")

    quotas = recorded_quotas(await store.notes())

    assert quotas == {"memory.": Quota(5, 4096)}
