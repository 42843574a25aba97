"""Issue 39, item 3: memory → SQLite → PostgreSQL → Redis → Redis Cluster → file → back, with nothing lost — every
JSON type, large values, time left to live, every scope, branched and compacted conversations, context blocks —
and search working after; importing the same file again changes nothing; an export made before a secret rotation
imports after it."""

from __future__ import annotations

import json
from pathlib import Path

from mcpkit import ManualClock
from mcpkit_storage import Keyring
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore
from mcpkit_storage.stores.redis._redis_store import RedisStore
from portability.support import VALUES, exported, imported, opened, read_everything, served, write_everything

SECRET = "portability-secret-A-0123456789abcdef"
ROTATED = "portability-secret-B-0123456789abcdef"


def values(data: bytes) -> list[bytes]:
    """The value records of an export, sealed lines opened: its header and end lines left out (they say when)."""
    return sorted(data.splitlines()[1:-1])


async def test_every_store_passes_everything_on_and_the_callers_read_it_all_back(
    tmp_path: Path, postgres_url: str, redis_url: str, redis_prefix: str, redis_cluster: object, cluster_prefix: str
) -> None:
    clock = ManualClock()
    first, last = tmp_path / "first.db", tmp_path / "last.db"
    async with served(first, SECRET, clock) as call_as:
        await write_everything(call_as)
        before = await read_everything(call_as)
    now = clock.now()
    keyring = Keyring([SECRET])
    async with opened(f"sqlite:///{first}") as store:
        file = await exported(store, keyring, now, plaintext=True)
    files = [file]

    memory = MemoryStore()
    await memory.open()
    chain = [
        (memory, keyring),
        (None, Keyring([SECRET])),  # PostgreSQL
        (RedisStore(redis_url, prefix=redis_prefix), Keyring([SECRET])),
        (RedisClusterStore(redis_cluster.url, prefix=cluster_prefix), Keyring([SECRET], placed=True)),  # type: ignore[attr-defined]
    ]
    for store, ring in chain:
        if store is None:
            async with opened(postgres_url) as postgres:
                report = await imported(postgres, ring, files[-1], now, plaintext=True, allow_global=True)
                files.append(await exported(postgres, ring, now, plaintext=True))
        else:
            await store.open()
            report = await imported(store, ring, files[-1], now, plaintext=True, allow_global=True)
            files.append(await exported(store, ring, now, plaintext=True))
            await store.close()
        assert report.imported == len(values(file))
        assert not report.over_quota
    records = [json.loads(line) for line in values(file)]
    assert {(record["namespace"], record["scope"]) for record in records} == {
        ("", "user"),
        ("", "tool"),
        ("", "session"),
        ("", "global"),
        ("conversations.", "user"),  # the conversation's tree, branches and summary
        ("history.", "user"),  # its messages
        ("blocks.", "user"),  # a writable context block's text
        ("context.", "user"),  # a searchable context block's entries
    }
    for later in files[1:]:
        assert values(later) == values(file)  # the same records, the same time left, through every store

    rotated = Keyring([ROTATED])  # the servers' secret changed since the export
    async with opened(f"sqlite:///{last}") as store:
        report = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        again = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        sealed = sorted([record.entry.data async for record in store.scan()])
        once_more = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        assert sorted([record.entry.data async for record in store.scan()]) == sealed
    assert (again.imported, again.unchanged) == (0, report.imported)
    assert once_more.imported == 0

    async with served(last, ROTATED, clock) as call_as:
        after = await read_everything(call_as)
    assert after == before
    assert after["search"][0] == "large"  # search works: the postings were made anew
    assert after["soon"][2] - now == before["soon"][2] - now  # an hour left, not a new hour
    # What was compared holds everything written (a read that found nothing would compare equal too).
    assert [before[name][0] for name in ("null", "big", "object", "large")] == [
        None,
        2**62,
        VALUES["object"],
        VALUES["large"],
    ]
    assert before["global"] == "Closed on Friday"
    assert before["sam"] == "Sam's kettle"
    assert before["tool"][0] == {"tool": True}
    assert [message["content"] for message in before["history"]["messages"]] == [
        "Kettle refund?",
        "Yes, within 30 days.",
    ]
    assert before["conversations"]["conversations"][0]["branches"] == 2
    assert before["history search"]["results"]
    assert "Prefers email." in before["notes"]
    assert [hit["key"] for hit in before["knowledge"]["results"]] == ["kettle"]
