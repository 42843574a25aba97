"""500 concurrent first starts of one SQLite store without ``REMEMBER_SECRET`` all end with one secret.

A start that ended with a secret of its own would seal values no other instance can ever read. The
processes are real (forked, released together once all wait at a gate), in batches sharing a fresh
directory; as root each is pid 1 of its own pid namespace, like servers in containers sharing a volume,
which is where a draft name made from the pid used to collide.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from reliability.figures import Figures

BATCHES = 10
PROCESSES = 50
DRIVER = Path(__file__).with_name("first_starts.py")


def test_concurrent_first_starts_agree_on_one_secret(tmp_path: Path, figures: Figures) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")}
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(tmp_path), str(BATCHES), str(PROCESSES)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    batches = json.loads(done.stdout)["batches"]
    starts = [result for batch in batches for result in batch["results"]]
    errors = [result["error"] for result in starts if "error" in result]
    as_pid_1 = sum(1 for result in starts if result["pid"] == 1)
    disagreeing = lost = 0
    for batch in batches:
        secret_file = Path(batch["directory"]) / "remember.db.secret"
        on_disk = secret_file.read_text().strip()
        ended_with = {result["secret"] for result in batch["results"] if "secret" in result}
        disagreeing += len(ended_with) > 1
        lost += sum(1 for result in batch["results"] if result.get("secret") not in (on_disk, None))
        info = secret_file.lstat()
        assert stat.S_ISREG(info.st_mode), batch["directory"]
        assert stat.S_IMODE(info.st_mode) == 0o600, batch["directory"]
        assert sorted(os.listdir(batch["directory"])) == ["remember.db.secret"], "drafts left behind"
    slowest = max(batch["seconds"] for batch in batches)
    figures.record(
        callers=len(starts),
        faults=disagreeing,
        inputs=BATCHES,
        lost=lost,
        internal_errors=len(errors),
        detail=f"{BATCHES} batches of {PROCESSES} first starts released at once ({as_pid_1} of them as pid 1 "
        f"of a pid namespace of their own); {disagreeing} batches ended with more than one secret, {lost} "
        f"starts with a secret other than the file's, {len(errors)} failed; slowest batch {slowest * 1000:.0f} ms",
    )
    assert len(starts) == BATCHES * PROCESSES, done.stderr
    assert errors == []
    assert (disagreeing, lost) == (0, 0)
