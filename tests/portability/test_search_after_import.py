"""Search works after an import: the postings are made anew under the target's secret, and with an embedder each
searchable value gets its vector in its place's shard, so a paraphrase that shares no word still finds it."""

from __future__ import annotations

from pathlib import Path

from mcpkit import ManualClock
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring
from portability.support import exported, imported, opened
from remember.support import SECRET, SECRET_B, build_server
from remember.test_search import found
from remember.test_semantic import NOTES, Concepts, keep_notes


async def test_an_import_with_an_embedder_makes_the_vectors_a_search_by_meaning_reads(tmp_path: Path) -> None:
    clock = ManualClock()
    source = {"type": "sqlite", "path": tmp_path / "source.db"}
    target = {"type": "sqlite", "path": tmp_path / "target.db"}
    async with running(build_server(RememberPlugin.init(**source, secret=SECRET, search=True)), clock=clock) as call_as:
        await keep_notes(call_as)
    async with opened(f"sqlite:///{source['path']}") as store:
        data = await exported(store, Keyring([SECRET]), clock.now())
    on_import = Concepts()
    async with opened(f"sqlite:///{target['path']}") as store:
        report = await imported(store, Keyring([SECRET_B]), data, clock.now(), embedder=on_import)

    later = Concepts()
    server = build_server(RememberPlugin.init(**target, secret=SECRET_B, search=True, embedder=later))
    async with running(server, clock=clock) as call_as:
        by_meaning = await found(call_as("nour"), "favourite hot beverage")
        by_words = await found(call_as("nour"), "refund order")

    assert report.imported == 2 * len(NOTES)  # each note and its change history (on by default)
    assert len(on_import.embedded) == len(NOTES)  # one vector per value, made by the import
    assert by_meaning[:1] == ["pref:coffee"]  # no word in common: found by its vector
    assert by_words[:1] == ["draft:T-1042"]
    assert later.embedded == ["favourite hot beverage", "refund order"]  # the queries alone: nothing embedded again
