"""The SQLite store's search index: documents, postings written in batches, and BM25 in SQL."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from mcpkit_search import K1, B, Stats

from .. import Postings, Ranking, Write

__all__ = [
    "BULK_MERGE_EVERY",
    "BULK_MERGE_STEP",
    "MERGE_EVERY",
    "MERGE_STEP",
    "add",
    "add_many",
    "changes_written",
    "merge",
    "merge_step",
    "one_change",
    "pending",
    "search",
    "sizes",
]

#: Changes (indexed writes, deleted or replaced entries) a store makes before it merges the fresh postings.
MERGE_EVERY = 256
#: Postings one merge step moves or deletes, about (whole documents: at least one). The store's calls queue behind
#: a merge on its one worker thread, so a merge goes in steps, one after each change until nothing is left: a whole
#: merge of 256 dense values (5 million postings) held every other call for 8 seconds.
MERGE_STEP = 8192
#: The same two while a run of writes is told of (``SQLiteStore.bulk``: an import). Every merge step rewrites the
#: term table's pages its postings fall in, nearly all of them once the step has more postings than the table has
#: pages: an import of 20,000 values and their histories (300,000 postings) merged a step per 512 writes and wrote
#: 614 MB for a file of 37 MB; a step per 8,192 writes, of up to 131,072 postings, wrote 175 MB (docs/benchmarks.md).
BULK_MERGE_EVERY = 8192
BULK_MERGE_STEP = 131072

# A document's number comes after every document's and every stale one's, so it never meets stale postings.
_NEXT = "1 + max(coalesce((SELECT max(doc) FROM remember_docs), 0), coalesce((SELECT max(doc) FROM remember_stale), 0))"
_ADD_DOC = f"""INSERT INTO remember_docs (doc, owner, bucket, key, length, expires_at, fresh)
    VALUES ({_NEXT}, :owner, :bucket, :key, :length, :expires_at, 1)"""
_NEXT_DOC = f"SELECT {_NEXT}"
#: Postings a write adds with one statement (a longer value's, a statement per this many).
_ADD_AT_ONCE = 32
_MERGE = (
    "INSERT INTO remember_terms (term, doc, count) SELECT term, doc, count FROM remember_fresh ORDER BY term, doc",
    "DELETE FROM remember_fresh",
    "UPDATE remember_docs SET fresh = NULL WHERE fresh IS NOT NULL",
    "DELETE FROM remember_terms WHERE doc IN (SELECT doc FROM remember_stale)",
    "DELETE FROM remember_stale",
)
_FRESH_EDGE = "SELECT doc FROM remember_fresh ORDER BY doc LIMIT 1 OFFSET :budget"
_MERGE_UPTO = (
    """INSERT INTO remember_terms (term, doc, count)
        SELECT term, doc, count FROM remember_fresh WHERE doc < :upto ORDER BY term, doc""",
    "DELETE FROM remember_fresh WHERE doc < :upto",
    "UPDATE remember_docs SET fresh = NULL WHERE fresh IS NOT NULL AND doc < :upto",
)
_PENDING = """SELECT EXISTS (SELECT 1 FROM remember_fresh) OR EXISTS (SELECT 1 FROM remember_stale)
    OR EXISTS (SELECT 1 FROM remember_docs WHERE fresh IS NOT NULL)"""

_LIVE = "(d.expires_at IS NULL OR d.expires_at > :now)"
_USAGE = "SELECT documents, length FROM remember_usage WHERE owner = :owner AND bucket = :bucket"
_EXPIRED = """SELECT count(*), coalesce(sum(length), 0) FROM remember_docs
    WHERE owner = :owner AND bucket = :bucket AND expires_at <= :now"""
# Every asked term's document frequency in one statement (``:terms``: a JSON array of them), a row per term.
# Merged postings: counted for each term (no sort of its postings), from the term's postings, each document looked
# up by its number. CROSS JOIN fixes that order and the unary + keeps SQLite from scanning the owner's documents
# instead (which its planner, without statistics, believes cheaper: at 10,000 values it was 3 to 6 times slower).
# Fresh postings: from the bucket's fresh documents (an index of their own, named so that the planner never scans
# the bucket's documents instead), each looked up with each term; from ``_SCAN_FRESH_FROM`` terms (a typo's near
# spellings), each fresh document's postings are read whole instead and kept where their term was asked (the unary
# + again), one pass over the bucket's fresh postings rather than a lookup for each fresh document and each term.
_MERGED = f"""(SELECT count(*) FROM remember_terms t CROSS JOIN remember_docs d ON d.doc = t.doc
        WHERE t.term = a.value AND +d.owner = :owner AND +d.bucket = :bucket AND {_LIVE})"""
_FRESH_DOCS = "d.owner = :owner AND d.bucket = :bucket AND d.fresh IS NOT NULL"
_FREQUENCIES = f"""SELECT a.value, {_MERGED} + (SELECT count(*) FROM remember_docs d INDEXED BY remember_docs_fresh
        CROSS JOIN remember_fresh f ON f.doc = d.doc AND f.term = a.value WHERE {_FRESH_DOCS} AND {_LIVE})
    FROM json_each(:terms) a"""
_FREQUENCIES_SCANNING_FRESH = f"""WITH fresh(term, held) AS MATERIALIZED (
        SELECT f.term, count(*) FROM remember_docs d INDEXED BY remember_docs_fresh
            CROSS JOIN remember_fresh f ON f.doc = d.doc
        WHERE {_FRESH_DOCS} AND {_LIVE} AND +f.term IN (SELECT value FROM json_each(:terms)) GROUP BY f.term)
    SELECT a.value, {_MERGED} + coalesce((SELECT held FROM fresh WHERE fresh.term = a.value), 0)
    FROM json_each(:terms) a"""
#: Terms from which a count reads the bucket's fresh postings whole rather than look each term up in each of its
#: fresh documents.
_SCAN_FRESH_FROM = 32


def _held(group: int, size: int, union: str = "UNION") -> str:
    """The documents holding one of the ``size`` terms of ``within``'s group ``group``, merged or fresh (``UNION
    ALL``: a document twice where it holds two, for ``IN``, which needs no distinct list)."""
    held = ", ".join(f":within{group}_{number}" for number in range(size))
    return f"""SELECT h.doc FROM remember_terms h WHERE h.term IN ({held})
        {union} SELECT h.doc FROM remember_docs hd INDEXED BY remember_docs_fresh
            CROSS JOIN remember_fresh h ON h.doc = hd.doc AND h.term IN ({held})
        WHERE hd.owner = :owner AND hd.bucket = :bucket AND hd.fresh IS NOT NULL"""


#: A bounded count of a group's merged holders (``search`` weighs them against the query terms' postings).
_HOLDERS = "SELECT count(*) FROM (SELECT 1 FROM remember_terms WHERE term IN ({held}) LIMIT :bound)"

_POSTINGS = """SELECT t.doc, w.idf, t.count FROM w CROSS JOIN remember_terms t ON t.term = w.term
        UNION ALL
        SELECT f.doc, w.idf, f.count FROM remember_docs fd INDEXED BY remember_docs_fresh CROSS JOIN w
            CROSS JOIN remember_fresh f ON f.doc = fd.doc AND f.term = w.term
        WHERE fd.owner = :owner AND fd.bucket = :bucket AND fd.fresh IS NOT NULL"""
# From the first group's holders: each one's postings for the query terms, looked up by (term, document).
_HOLDERS_POSTINGS = """SELECT t.doc, w.idf, t.count FROM hold CROSS JOIN w
            CROSS JOIN remember_terms t ON t.term = w.term AND t.doc = hold.doc
        UNION ALL
        SELECT f.doc, w.idf, f.count FROM hold CROSS JOIN w CROSS JOIN remember_fresh f ON f.doc = hold.doc
            AND f.term = w.term"""


#: A group of at most this many terms is looked up term by term in a ranked document; a larger one (a window's
#: dozens) is found among the document's own postings, read in order (its words and its seven facets).
_SEEKS_UPTO = 4


def _holds(group: int, size: int) -> str:
    """SQL true when the ranked document ``r`` holds one of the ``size`` terms of ``within``'s group ``group``, in
    the postings its flag says it has (a merge moves a document's postings and clears its flag together)."""
    held = ", ".join(f":within{group}_{number}" for number in range(size))
    if size <= _SEEKS_UPTO:
        merged = f"remember_terms h WHERE h.term IN ({held}) AND h.doc = r.doc"
        fresh = f"remember_fresh h WHERE h.doc = r.doc AND h.term IN ({held})"
    else:  # the unary + keeps SQLite from seeking each of the group's terms instead
        merged = f"remember_terms h INDEXED BY remember_terms_doc WHERE h.doc = r.doc AND +h.term IN ({held})"
        fresh = f"remember_fresh h WHERE h.doc = r.doc AND +h.term IN ({held})"
    return f"CASE WHEN r.fresh IS NULL THEN EXISTS (SELECT 1 FROM {merged}) ELSE EXISTS (SELECT 1 FROM {fresh}) END"


@functools.lru_cache(maxsize=64)
def _ranking_sql(terms: int, within: tuple[int, ...] = (), holders: bool = False, after: tuple[int, ...] = ()) -> str:
    """BM25 in SQL (``mcpkit_search.weight`` summed per document) over ``terms`` (term, idf) pairs; with
    ``within`` (each group's size), only over the documents holding a term of every group: ``holders``, from the
    first group's holders (few of them), else from the terms' postings, each document looked up in the groups.
    ``after`` (groups of ``within``, by number): those groups are not looked up in the ranking; it is cut at
    ``:over`` instead of ``:limit``, each row followed by whether its document holds a term of each (tested as the
    rows are read, in the ranking's order: a caller reads only as far as it needs).

    Merged and fresh postings are ranked by the one expression, so a document scores the same before and
    after a merge.
    """
    start = 1 if holders else 0
    having = " AND ".join(
        f"p.doc IN ({_held(group, size, 'UNION ALL')})"
        for group, size in enumerate(within[start:], start=start)
        if group not in after
    )
    weights = ", ".join(f"(:term{number}, :idf{number})" for number in range(terms))
    hold = f"hold(doc) AS ({_held(0, within[0])})," if holders else ""
    cut = ":over" if after else ":limit"
    ranking = f"""WITH w(term, idf) AS (VALUES {weights}), {hold}
    p(doc, idf, count) AS ({_HOLDERS_POSTINGS if holders else _POSTINGS})
    SELECT d.key, sum(p.idf * p.count * {K1 + 1!r} / (p.count + {K1!r} * (1 - {B!r} + {B!r} * d.length / :average)))
        AS score{", p.doc, d.fresh" if after else ""}
    FROM p CROSS JOIN remember_docs d ON d.doc = p.doc
    WHERE +d.owner = :owner AND +d.bucket = :bucket AND {_LIVE}
    GROUP BY p.doc {"HAVING " + having if having else ""} ORDER BY score DESC, d.key LIMIT {cut}"""
    if not after:
        return ranking
    # Each row tested as it is read: no ORDER BY outside (the ranking's sort feeds this query row by row, in its
    # order), which would test every row before the first is read.
    tests = ", ".join(_holds(group, within[group]) for group in after)
    return f"SELECT r.key, r.score, {tests} FROM ({ranking}) r"


#: Documents and postings a batch of writes adds with one statement.
_DOCS_AT_ONCE = 128
_ADD_MANY_AT_ONCE = 256


def sizes(count: int, most: int) -> Iterator[int]:
    """``count`` rows split into statements of ``most``, then of powers of two (so that a few statement texts serve
    every count, each kept in the connection's statement cache)."""
    while count:
        size = most if count >= most else 1 << (count.bit_length() - 1)
        yield size
        count -= size


@functools.lru_cache(maxsize=2 * _ADD_AT_ONCE)
def _add_postings_sql(postings: int) -> str:
    """One statement adding ``postings`` fresh postings: (document, term, count) each."""
    return "INSERT INTO remember_fresh (doc, term, count) VALUES " + ", ".join(["(?, ?, ?)"] * postings)


def add(db: sqlite3.Connection, params: dict[str, Any], postings: Postings) -> None:
    """Give the entry just written (``params``: its address and deadline) its fresh document and postings."""
    doc = db.execute(_ADD_DOC, {**params, "length": postings.length}).lastrowid
    rows = [value for term, count in postings.terms.items() for value in (doc, term, count)]
    for start in range(0, len(rows), 3 * _ADD_AT_ONCE):
        batch = rows[start : start + 3 * _ADD_AT_ONCE]
        db.execute(_add_postings_sql(len(batch) // 3), batch)


def add_many(db: sqlite3.Connection, writes: Sequence[tuple[Write, Postings]]) -> None:
    """What ``add`` gives each of ``writes`` (just written, each with postings), with a statement per
    ``_DOCS_AT_ONCE`` documents and per ``_ADD_MANY_AT_ONCE`` postings: the same documents, numbered in order past
    every live and stale one (a replaced, unmerged document's number may be taken again: its postings went with it)."""
    if not writes:
        return
    first: int = db.execute(_NEXT_DOC).fetchone()[0]
    docs: list[Any] = []
    rows: list[int] = []
    for doc, ((owner, bucket, key, _, _, expires_at, *_), postings) in enumerate(writes, start=first):
        docs.extend((doc, owner, bucket, key, postings.length, expires_at))
        rows.extend(value for term, count in postings.terms.items() for value in (doc, term, count))
    start = 0
    for size in sizes(len(writes), _DOCS_AT_ONCE):
        db.execute(_add_docs_sql(size), docs[6 * start : 6 * (start + size)])
        start += size
    start = 0
    for size in sizes(len(rows) // 3, _ADD_MANY_AT_ONCE):
        db.execute(_add_postings_sql(size), rows[3 * start : 3 * (start + size)])
        start += size


@functools.lru_cache(maxsize=8)
def _add_docs_sql(docs: int) -> str:
    """One statement adding ``docs`` fresh documents: (document, owner, bucket, key, length, expires_at) each."""
    return "INSERT INTO remember_docs (doc, owner, bucket, key, length, expires_at, fresh) VALUES " + ", ".join(
        ["(?, ?, ?, ?, ?, ?, 1)"] * docs
    )


def pending(db: sqlite3.Connection) -> bool:
    """Whether a merge has anything to do: fresh postings or documents, or stale ones."""
    return bool(db.execute(_PENDING).fetchone()[0])


def merge(db: sqlite3.Connection) -> None:
    """Move the fresh postings into the term-keyed table and delete the stale ones, inside the caller's
    transaction."""
    for statement in _MERGE:
        db.execute(statement)


#: Stale documents a merge step of ``MERGE_STEP`` postings deletes the postings of, at most (a larger step, more).
_STALE_PER_STEP = 64


def merge_step(db: sqlite3.Connection, budget: int | None = None) -> bool:
    """Merge about ``budget`` fresh postings (the oldest documents', whole) and delete the postings of up to
    ``_STALE_PER_STEP`` stale documents per ``MERGE_STEP`` of the budget (about ``budget`` postings), inside the
    caller's transaction; whether more is left to merge."""
    budget = MERGE_STEP if budget is None else budget
    first = db.execute("SELECT min(doc) FROM remember_fresh").fetchone()[0]
    edge = None if first is None else db.execute(_FRESH_EDGE, {"budget": budget}).fetchone()
    if edge is None:  # all that is fresh fits in this step (or only documents without postings are)
        for statement in _MERGE[:3]:
            db.execute(statement)
    else:
        for statement in _MERGE_UPTO:  # the documents below the edge move, each whole (at least the first)
            db.execute(statement, {"upto": max(first + 1, edge[0])})
    left = budget
    stale = max(1, _STALE_PER_STEP * budget // MERGE_STEP)  # a larger step takes as many more of them
    for (doc,) in db.execute("SELECT doc FROM remember_stale ORDER BY doc LIMIT ?", (stale,)).fetchall():
        if left <= 0:
            break
        left -= db.execute("DELETE FROM remember_terms WHERE doc = ?", (doc,)).rowcount
        db.execute("DELETE FROM remember_stale WHERE doc = ?", (doc,))
    return pending(db)


def _frequencies(db: sqlite3.Connection, params: dict[str, Any], terms: list[int]) -> tuple[int, ...]:
    """How many of the bucket's live documents hold each of ``terms``, counted in one statement."""
    if not terms:
        return ()
    sql = _FREQUENCIES if len(terms) < _SCAN_FRESH_FROM else _FREQUENCIES_SCANNING_FRESH
    counted = dict(db.execute(sql, {**params, "terms": json.dumps(terms)}).fetchall())
    return tuple(counted.get(term, 0) for term in terms)


#: A group held by at least one in this many of the bucket's documents is tested on the ranking's best rather than
#: listed for the ranking (docs/architecture.md).
AFTER_SHARE = 4
#: How many times further than ``limit`` that ranking reaches, for each such group: at least one row in
#: ``AFTER_SHARE`` passes it, so about 1.5 times the rows needed (at 10,000 values 4 times cost as little but fell
#: short, ranking again, on 12 of 528 rankings; 8 and 12 times cost more in sorting).
AFTER_REACH = 6


def search(
    db: sqlite3.Connection,
    params: dict[str, Any],
    terms: list[int],
    limit: int,
    given: Stats | None,
    within: Sequence[Sequence[int]] = (),
) -> Ranking:
    """The bucket's statistics for ``terms`` and its ``limit`` best keys (of those holding a term of every group
    of ``within``), scored with ``given`` (else its own), inside the caller's read transaction (so the two
    agree)."""
    usage = db.execute(_USAGE, params).fetchone()
    if usage is None:
        return Ranking(Stats(0, 0, (0,) * len(terms)), [])
    expired, expired_length = db.execute(_EXPIRED, params).fetchone()
    frequencies = _frequencies(db, params, terms)
    own = Stats(usage[0] - expired, usage[1] - expired_length, frequencies)
    stats = given or own
    if limit <= 0 or stats.documents <= 0 or not terms or not all(within):  # a group without terms: none holds it
        return Ranking(own, [])
    arguments = {**params, "average": stats.average, "limit": limit}
    for number, (term, idf) in enumerate(zip(terms, stats.weights(), strict=True)):
        arguments[f"term{number}"], arguments[f"idf{number}"] = term, idf
    for group, held in enumerate(within):
        arguments.update((f"within{group}_{number}", term) for number, term in enumerate(held))
    holders = False
    after: tuple[int, ...] = ()
    if within:
        # From the first group's holders when looking up each one's query terms (a lookup costs about 4 reads of
        # a posting in order) costs less than reading the terms' postings.
        bound = sum(frequencies) // (4 * len(terms)) + 1
        broad = own.documents // AFTER_SHARE + 1
        counted = _holders(db, arguments, 0, len(within[0]), max(bound, broad))
        holders = counted < bound
        if not holders:  # the groups a large share of the bucket holds: tested on the ranking's best instead
            after = tuple(
                group
                for group, held in enumerate(within)
                if (counted if group == 0 else _holders(db, arguments, group, len(held), broad)) >= broad
            )
    if after:
        found = _after(db, _ranking_sql(len(terms), tuple(map(len, within)), False, after), arguments, limit, after)
        if found is not None:
            return Ranking(own, found)
    rows = db.execute(_ranking_sql(len(terms), tuple(map(len, within)), holders), arguments).fetchall()
    return Ranking(own, [(key, score) for key, score in rows])


def _holders(db: sqlite3.Connection, arguments: dict[str, Any], group: int, size: int, bound: int) -> int:
    """How many merged postings hold a term of ``within``'s group ``group`` (``size`` terms), counted up to
    ``bound``."""
    held = ", ".join(f":within{group}_{number}" for number in range(size))
    counted: int = db.execute(_HOLDERS.format(held=held), {**arguments, "bound": bound}).fetchone()[0]
    return counted


def _after(
    db: sqlite3.Connection, sql: str, arguments: dict[str, Any], limit: int, after: Sequence[int]
) -> list[tuple[str, float]] | None:
    """The ``limit`` best rows of ``sql`` (a ranking cut further, each row with whether it passes each group of
    ``after``) that pass every group, read in the ranking's order only as far as needed; None when the rows read
    were not all there were and too few passed (the caller then ranks with the groups looked up)."""
    over = limit * AFTER_REACH ** len(after)
    found: list[tuple[str, float]] = []
    read = 0
    last: tuple[float, str] | None = None
    cursor = db.execute(sql, {**arguments, "over": over})
    try:
        for key, score, *passes in cursor:
            read += 1
            if last is not None and (-score, key) < last:
                return None  # not in the ranking's order (no SQLite this was measured on does that): rank as before
            last = (-score, key)
            if all(passes):
                found.append((key, score))
                if len(found) == limit:
                    return found
    finally:
        cursor.close()
    return found if read < over else None


def one_change(_: object) -> int:
    """A write's changes to the index (the store merges every ``MERGE_EVERY``): one."""
    return 1


def changes_written(results: Sequence[object]) -> int:
    """A batch of writes' changes to the index: one per write made (True)."""
    return sum(result is True for result in results)
