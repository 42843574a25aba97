"""Every command that takes ``--store`` lists every kind of store in its ``--help``, PostgreSQL and Redis Cluster
included (issue 36 item 7): the demos as ``python -m`` runs them, and the operator commands, in subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit_storage import STORE_URLS, parse_store_url
from mcpkit_storage.backing._config import BUILT_IN

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
ROOT = Path(__file__).resolve().parents[2]
#: What names each kind of store in a help text.
SCHEMES = {
    "memory": "memory",
    "sqlite": "sqlite:///",
    "redis": "redis://",
    "redis-cluster": "redis+cluster://",
    "postgres": "postgresql://",
}


def test_store_urls_hold_one_url_of_every_store_that_outlives_a_process() -> None:
    kinds = [kind.name for kind in BUILT_IN]  # a store registered by a test or a page is in no help text

    assert sorted(SCHEMES) == sorted(kinds)
    filled = [url.replace("HOST", "db").replace("PORT", "5000").replace("USER", "mcpkit") for url in STORE_URLS]
    assert sorted({parse_store_url(url).type for url in filled}) == sorted(set(kinds) - {"memory"})


@pytest.mark.parametrize(
    ("command", "kinds"),
    [
        pytest.param([sys.executable, "-m", "mcpkit_helpdesk"], SCHEMES, id="python -m mcpkit_helpdesk"),
        pytest.param([sys.executable, "-m", "mcpkit_memoryserver"], SCHEMES, id="python -m mcpkit_memoryserver"),
        *(
            pytest.param([MCPKIT, "remember", action], set(SCHEMES) - {"memory"}, id=f"mcpkit remember {action}")
            for action in ("rotate", "reindex", "purge")
        ),
    ],
)
def test_the_help_of_each_command_lists_every_store(command: list[str], kinds: set[str]) -> None:
    done = subprocess.run([*command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    store_help = " ".join(done.stdout.split("--store STORE")[-1].split())
    missing = [kind for kind in kinds if SCHEMES[kind] not in store_help]
    assert missing == [], store_help
