"""The ``mcpkit remember`` commands run with their startup heap frozen (``frozen_heap``): the collector's full passes
leave out the modules' objects while an import runs, and the process gets them back after; a heap the process froze
itself stays as it was."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest

import mcpkit_storage._portability_cli as commands
from mcpkit import ManualClock
from mcpkit._cli import main
from mcpkit_storage.portability import frozen_heap, import_memory
from portability.support import served, write_everything

SECRET = "frozen-heap-secret-0123456789abcdef"


def test_objects_alive_on_entry_are_left_out_until_it_ends() -> None:
    assert gc.get_freeze_count() == 0  # pytest freezes nothing
    before: object = type("Before", (), {})()  # a tracked object made before

    with frozen_heap():
        frozen = gc.get_freeze_count()
        assert not any(each is before for each in gc.get_objects())

    assert frozen > 1000  # the modules' objects and the test's
    assert gc.get_freeze_count() == 0
    assert any(each is before for each in gc.get_objects())


def test_a_failure_inside_gives_the_heap_back() -> None:
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("inside")

    assert gc.get_freeze_count() == 0


def test_a_heap_the_process_froze_itself_stays_frozen() -> None:
    gc.freeze()  # as a server does before it forks its workers
    try:
        frozen = gc.get_freeze_count()
        with frozen_heap():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen  # not unfrozen by the run
    finally:
        gc.unfreeze()


async def filled(source: Path) -> None:
    async with served(source, SECRET, ManualClock()) as call_as:
        await write_everything(call_as)


def test_the_import_command_runs_with_the_heap_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, target, file = tmp_path / "source.db", tmp_path / "target.db", tmp_path / "all.jsonl"
    asyncio.run(filled(source))
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    assert (
        main(["remember", "export", "--store", f"sqlite:///{source}", "--all", "--plaintext", "--out", str(file)]) == 0
    )
    seen: list[int] = []

    async def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_freeze_count())
        return await import_memory(*args, **kwargs)

    monkeypatch.setattr(commands, "import_memory", watched)
    done = main(
        ["remember", "import", "--store", f"sqlite:///{target}", "--create", "--plaintext", "--global", str(file)]
    )

    assert done == 0
    assert len(seen) == 1
    assert seen[0] > 1000
    assert gc.get_freeze_count() == 0
    assert target.stat().st_size > 0
