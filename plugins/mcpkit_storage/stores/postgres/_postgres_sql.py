"""The PostgreSQL store's queries and writes, by name (``%(name)s`` parameters, psycopg's style); the schema is
in ``_postgres_schema``, the locks and session settings with the code that sends them."""

from __future__ import annotations

from mcpkit_search import K1, B

__all__ = [
    "ADD_DOC",
    "ADD_TERMS",
    "DELETE",
    "DELETE_BUCKET",
    "DELETE_OWNER",
    "ENTRIES",
    "FORGET_NOTE",
    "GET",
    "GET_MANY",
    "LOCK_ROW",
    "LOCK_ROW_QUOTA",
    "NOTE",
    "NOTES",
    "PURGE",
    "PURGE_USAGE",
    "PUT",
    "QUOTA",
    "RANKING",
    "SCAN_FIRST",
    "SCAN_NEXT",
    "SEARCH_EXPIRED",
    "SEARCH_FREQUENCIES",
    "SEARCH_USAGE",
    "TRIM",
    "ranking",
]

LIVE = "(expires_at IS NULL OR expires_at > %(now)s)"
AT = "owner = %(owner)s AND bucket = %(bucket)s AND key = %(key)s"
GET = f"SELECT data, expires_at, created FROM remember_entries WHERE {AT} AND {LIVE}"
GET_MANY = f"""SELECT owner, bucket, key, data, expires_at, created FROM remember_entries
    WHERE (owner, bucket, key) IN (SELECT * FROM unnest(%(owners)s::text[], %(buckets)s::text[], %(keys)s::text[]))
    AND {LIVE}"""
# The first-write time the row keeps (``Entry.created``): the one given (``given``; None: unknown), else its own
# while live, else now.
PUT = """INSERT INTO remember_entries (owner, bucket, key, data, expires_at, created)
    VALUES (%(owner)s, %(bucket)s, %(key)s, %(data)s, %(expires_at)s,
        CASE WHEN %(given)s::boolean THEN %(created)s::float8 ELSE %(now)s::float8 END)
    ON CONFLICT (owner, bucket, key) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at,
    created = CASE WHEN %(given)s::boolean THEN %(created)s::float8
        WHEN remember_entries.expires_at <= %(now)s::float8 THEN %(now)s::float8 ELSE remember_entries.created END"""
DELETE = f"DELETE FROM remember_entries WHERE {AT} RETURNING expires_at"
ENTRIES = f"""SELECT key, data, expires_at, created FROM remember_entries
    WHERE owner = %(owner)s AND bucket = %(bucket)s AND {LIVE} ORDER BY key"""
DELETE_BUCKET = "DELETE FROM remember_entries WHERE owner = %(owner)s AND bucket = %(bucket)s RETURNING expires_at"
DELETE_OWNER = "DELETE FROM remember_entries WHERE owner = %(owner)s"
# The bucket's usage and the entry a write replaces (its length is NULL when there is none), in one round trip.
QUOTA = f"""SELECT (SELECT count FROM remember_usage WHERE owner = %(owner)s AND bucket = %(bucket)s),
    (SELECT bytes FROM remember_usage WHERE owner = %(owner)s AND bucket = %(bucket)s),
    (SELECT length(data) FROM remember_entries WHERE {AT}), (SELECT expires_at FROM remember_entries WHERE {AT}),
    (SELECT length FROM remember_usage WHERE owner = %(owner)s AND bucket = %(bucket)s),
    (SELECT length FROM remember_docs WHERE {AT})"""
TRIM = "DELETE FROM remember_entries WHERE owner = %(owner)s AND bucket = %(bucket)s AND expires_at <= %(now)s"
LOCK_ROW = f"SELECT data, expires_at, created FROM remember_entries WHERE {AT} AND {LIVE} FOR UPDATE"
# A compare-and-set's locked row (its data NULL when there is no live one) and then ``QUOTA``'s columns, in one round
# trip: a swap under a quota needs both (under its bucket's lock, so the usage cannot move between them).
LOCK_ROW_QUOTA = f"""WITH locked AS ({LOCK_ROW})
    SELECT (SELECT data FROM locked), (SELECT expires_at FROM locked), (SELECT created FROM locked), quota.*
    FROM ({QUOTA}) AS quota"""
SCANNED = """SELECT e.owner, e.bucket, e.key, e.data, e.expires_at, e.created, d.doc IS NOT NULL FROM remember_entries e
    LEFT JOIN remember_docs d ON d.owner = e.owner AND d.bucket = e.bucket AND d.key = e.key"""
SCAN_FIRST = f"{SCANNED} ORDER BY e.owner, e.bucket, e.key LIMIT %(limit)s"
SCAN_NEXT = f"""{SCANNED} WHERE (e.owner, e.bucket, e.key) > (%(owner)s, %(bucket)s, %(key)s)
    ORDER BY e.owner, e.bucket, e.key LIMIT %(limit)s"""
PURGE = "DELETE FROM remember_entries WHERE expires_at <= %(now)s"
NOTES = "SELECT name, value FROM remember_notes"
FORGET_NOTE = "DELETE FROM remember_notes WHERE name = %(name)s"
NOTE = (
    "INSERT INTO remember_notes (name, value) VALUES (%(name)s, %(value)s)"
    " ON CONFLICT (name) DO UPDATE SET value = excluded.value"
)
PURGE_USAGE = "DELETE FROM remember_usage WHERE count <= 0 AND documents <= 0"
ADD_DOC = """INSERT INTO remember_docs (owner, bucket, key, length, expires_at)
    VALUES (%(owner)s, %(bucket)s, %(key)s, %(length)s, %(expires_at)s) RETURNING doc"""
ADD_TERMS = """INSERT INTO remember_terms (term, doc, count)
    SELECT term, %(doc)s, count FROM unnest(%(terms)s::bigint[], %(counts)s::integer[]) AS p (term, count)"""
SEARCH_USAGE = "SELECT documents, length FROM remember_usage WHERE owner = %(owner)s AND bucket = %(bucket)s"
SEARCH_EXPIRED = """SELECT count(*), coalesce(sum(length), 0) FROM remember_docs
    WHERE owner = %(owner)s AND bucket = %(bucket)s AND expires_at <= %(now)s"""
# Both start from the terms' postings (MATERIALIZED keeps them first; ``= ANY`` of the terms, which the primary
# key serves) and look each document up after: cost in proportion to the postings of the asked terms, whatever
# the planner's statistics say. Left to itself, with statistics older than a bulk of writes, it walked the
# owner's every document instead (57 ms at 10,000, not 20), and a join of the terms read every posting of the
# store (hundreds of ms among a million other values).
SEARCH_FREQUENCIES = """WITH p AS MATERIALIZED (
        SELECT term, doc FROM remember_terms WHERE term = ANY(%(terms)s::bigint[]))
    SELECT p.term, count(*) FROM p JOIN remember_docs d ON d.doc = p.doc
    WHERE d.owner = %(owner)s AND d.bucket = %(bucket)s AND (d.expires_at IS NULL OR d.expires_at > %(now)s)
    GROUP BY p.term"""
RANKING = f"""WITH p AS MATERIALIZED (
        SELECT term, doc, count FROM remember_terms WHERE term = ANY(%(terms)s::bigint[]))
    SELECT d.key, sum(w.idf * p.count * {K1 + 1!r}
        / (p.count + {K1!r} * (1 - {B!r} + {B!r} * d.length / %(average)s))) AS score
    FROM p JOIN unnest(%(terms)s::bigint[], %(idfs)s::float8[]) AS w (term, idf) ON w.term = p.term
    JOIN remember_docs d ON d.doc = p.doc
    WHERE d.owner = %(owner)s AND d.bucket = %(bucket)s AND (d.expires_at IS NULL OR d.expires_at > %(now)s)
    GROUP BY d.doc, d.key {{having}} ORDER BY score DESC, d.key LIMIT %(limit)s"""


def ranking(groups: int) -> str:
    """``RANKING`` over the documents holding a term of each of ``groups`` groups (``%(within0)s``, ...)."""
    held = " AND ".join(  # each group's holders listed once (a hashed set), each ranked document looked up in it
        f"d.doc IN (SELECT h.doc FROM remember_terms h WHERE h.term = ANY(%(within{group})s::bigint[]))"
        for group in range(groups)
    )
    return RANKING.replace("{having}", f"HAVING {held}" if held else "")
