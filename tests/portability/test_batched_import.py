"""Issue 39, item 8: an import writes many values per store call (a transaction on SQLite) and keeps its guarantees
across chunks: quotas refuse whole values in file order and name their lines, postings are made with each value, and
importing the file again changes nothing."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from mcpkit_storage import Keyring, Place, Quota, Vault
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from portability.support import exported, imported

KEYRING = Keyring(["portability-secret-0123456789abcdef"])
NOUR, SAM = json.dumps(["u", "nour"]), json.dumps(["u", "sam"])
#: More than two of the import's chunks (256 values each).
NOURS = 600


async def test_an_import_of_several_chunks_keeps_quotas_file_order_and_changes_nothing_again(tmp_path: Path) -> None:
    source, now = MemoryStore(), time.time()
    vault = Vault(source, KEYRING, search_all=True)
    for number in range(NOURS):
        await vault.write(
            Place(NOUR, "user"), f"n{number}", json.dumps(f"note {number} about oat milk"), None, now, None
        )
    for number in range(10):
        await vault.write(Place(SAM, "user"), f"s{number}", json.dumps(f"Sam's note {number}"), None, now, None)
    lines = (await exported(source, KEYRING, now, plaintext=True)).splitlines(keepends=True)
    records = {number: json.loads(line) for number, line in enumerate(lines, 1) if b'"value"' in line}
    nours = [number for number, record in records.items() if record["owner"] == ["u", "nour"]]
    target = SQLiteStore(tmp_path / "target.db")
    await target.open()
    try:
        quota = Quota(values=500, bytes=None)
        data = b"".join(lines)
        report = await imported(target, KEYRING, data, now, plaintext=True, quota=quota, on_conflict="replace")
        assert report.over_quota == nours[500:]  # Nour's values past the 500th, in file order; none of Sam's
        assert report.imported == 500 + 10
        found = await Vault(target, KEYRING).payloads(Place(NOUR, "user"), now)
        assert len(found) == 500
        assert {key: payload.value() for key, payload in found.items()} == {
            records[number]["key"]: records[number]["value"] for number in nours[:500]
        }
        owner, bucket = KEYRING.locate_bucket(NOUR, "user")[0]
        index = Vault(target, KEYRING).index
        ranking = await target.search(owner, bucket, index.terms(0, owner, bucket, index.words("oat")), now, limit=0)
        assert ranking.stats.frequencies == (500,)  # postings made with each value
        with sqlite3.connect(tmp_path / "target.db") as db:  # the run's last postings merged as it ended
            assert db.execute("SELECT count(*) FROM remember_fresh").fetchone() == (0,)

        again = await imported(target, KEYRING, data, now, plaintext=True, quota=quota)
        assert (again.imported, again.over_quota) == (0, nours[500:])
        assert await Vault(target, KEYRING).payloads(Place(NOUR, "user"), now) == found
    finally:
        await target.close()
