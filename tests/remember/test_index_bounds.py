"""The search index of a caller's values is bounded (issue 29, point 2): its words count against ``max_bytes``, and
one value indexes at most ``MAX_TERMS_PER_VALUE`` distinct terms. Before, 279 values of 60,000 characters of
distinct short words filled a 16 MiB quota and grew Redis by 589 MB (``bench/hardening.py`` measures it per store).
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import string
import threading
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring
from mcpkit_storage.index._index import MAX_TERMS_PER_VALUE
from mcpkit_storage.stores._store import INDEX_BYTES_PER_WORD
from remember.support import KEYS

WORDS = ["".join(letters) for letters in itertools.product(string.ascii_lowercase, repeat=3)]


@tool(name="keep", description="Keep a searchable value.")
class Keep(ToolContext):
    async def execute(self, key: str, value: str) -> bool:
        await self.remember.set(key, value, scope="user")
        return True


@tool(name="find", description="Search the caller's values.")
class Find(ToolContext):
    async def execute(self, query: str) -> list[str]:
        return [match.key for match in await self.remember.search(query, scope="user")]


def served(path: Path, **limits: int) -> Server:
    plugin = RememberPlugin.init(type="sqlite", path=path / "kept.db", search=True, **limits)

    @app(id="notes", tools=[Keep, Find], plugins=[plugin])
    class Notes: ...

    return Server([Notes], auth=StaticKeys(KEYS))


def postings(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path / "kept.db")) as database:
        return int(database.execute("SELECT count(*) FROM remember_terms").fetchone()[0])


async def test_one_value_indexes_at_most_max_terms_per_value_terms(tmp_path: Path) -> None:
    dense = " ".join(WORDS[: MAX_TERMS_PER_VALUE + 2000])
    async with running(served(tmp_path)) as call_as:
        await call_as("nour").call("keep", {"key": "dense", "value": dense})
        first = await call_as("nour").call("find", {"query": WORDS[10]})
        indexed = postings(tmp_path)
    assert indexed <= MAX_TERMS_PER_VALUE
    assert first == {"result": ["dense"]}


async def test_indexed_words_count_against_max_bytes(tmp_path: Path) -> None:
    value = " ".join(WORDS[:3000])  # 12,000 bytes, and 3,000 indexed words
    limit = 4 * (len(value) + 3000 * INDEX_BYTES_PER_WORD)  # room for about 4 such values, words counted
    refusals = []
    async with running(served(tmp_path, max_bytes=limit)) as call_as:
        for number in range(12):  # counting its bytes alone, the quota would take 11 of them
            try:
                await call_as("nour").call("keep", {"key": f"v{number}", "value": value})
            except ToolCallError as error:
                refusals.append(error)
        await call_as("sam").call("keep", {"key": "v0", "value": value})  # another caller's quota is their own
    kept = 12 - len(refusals)
    assert kept <= 4
    assert refusals[0].code == "REMEMBER_QUOTA_EXCEEDED"
    assert f"past {limit:,} bytes" in refusals[0].message
    assert "indexed words count" in refusals[0].message


async def test_a_long_value_is_analysed_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread = threading.get_ident()
    hashed: list[bool] = []  # for each blind hashing of words: was it on the event loop's thread?
    blind = Keyring.blind

    def watched(self: Keyring, *args: Any) -> Any:
        hashed.append(threading.get_ident() == loop_thread)
        return blind(self, *args)

    monkeypatch.setattr(Keyring, "blind", watched)
    async with running(served(tmp_path)) as call_as:
        await call_as("nour").call("keep", {"key": "long", "value": " ".join(WORDS[:4000])})  # 16,000 characters
        on_loop_long = sum(hashed)
        hashed.clear()
        await call_as("nour").call("keep", {"key": "short", "value": "a short note"})
    assert on_loop_long == 0
    assert hashed  # a short value is analysed on the loop: it costs less than handing it to a thread
    assert all(hashed)
