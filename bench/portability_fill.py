"""The stores ``python -m bench.portability`` exports: values alone, or each value with its change history as a
default ``RememberPlugin`` (``history=3``) writes it, and a large one made fast for the memory run."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

from bench.tokens import REMEMBER_SECRET
from mcpkit_storage import Keyring, Place, Vault, origin_bytes, seal_meta, write_many_versioned
from mcpkit_storage.sealing import pack
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

__all__ = ["HISTORY", "OWNERS", "fill", "fill_large"]

OWNERS = 100
#: Versions a default ``RememberPlugin`` keeps of each key (its ``history=3``).
HISTORY = 3
#: Values written per fill batch (``set_many``-like: one write per owner and batch).
_BATCH = 500


async def fill(path: Path, count: int, *, histories: bool) -> float:
    """A SQLite store of ``count`` searchable values; with ``histories``, each value with its change history, written
    as a default plugin's ``set_many`` writes them (``write_many_versioned``, a tool's provenance). The seconds it
    took."""
    from bench.search import SEED, sentence  # here: the exporting process measured for memory imports nothing more

    store = SQLiteStore(path)
    await store.open()
    vault = Vault(store, Keyring([REMEMBER_SECRET]), search_all=True)
    meta = seal_meta("tool", None, origin_bytes("bench", "notes", "bench-client", "1.0", None, None))
    rng = random.Random(SEED)
    started = time.perf_counter()
    now = time.time()
    for start in range(0, count, _BATCH):
        owner = (start // _BATCH) % OWNERS
        place = Place(json.dumps(["u", f"user-{owner}"]), "user")
        texts = {f"note-{number}": json.dumps(sentence(rng)) for number in range(start, min(start + _BATCH, count))}
        if histories:
            items = [(key, text, b"") for key, text in texts.items()]
            await write_many_versioned(vault, place, items, None, None, time.time, meta, HISTORY, None)
        else:
            await vault.write_many(place, texts, [b""] * len(texts), None, now, None, time.time)
    await store.close()
    return time.perf_counter() - started


def fill_large(path: Path, count: int) -> float:
    """A SQLite store of ``count`` sealed values made fast: sealed here, inserted in one transaction (no postings:
    the export reads none); the seconds it took."""
    from bench.search import SEED, sentence

    asyncio.run(fill(path, 0, histories=False))  # the schema, as the store makes it
    keyring, rng, now = Keyring([REMEMBER_SECRET]), random.Random(SEED), time.time()
    phrases = [json.dumps(sentence(rng)).encode() for _ in range(1000)]
    started = time.perf_counter()

    def rows() -> Any:
        for number in range(count):
            identity, key = json.dumps(["u", f"user-{number % OWNERS}"]), f"note-{number}"
            address = keyring.locate(identity, "user", key)[0]
            yield (*address, keyring.seal(*address, pack(identity, "user", key, phrases[number % 1000], None, now)))

    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.executemany("INSERT INTO remember_entries (owner, bucket, key, data) VALUES (?, ?, ?, ?)", rows())
    finally:
        conn.close()  # the last connection: its write-ahead log goes into the file, as a server's does as it runs
    return time.perf_counter() - started
