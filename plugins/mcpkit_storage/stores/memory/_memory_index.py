"""The memory store's search index for one bucket: append-only postings lists, swept a little at a time."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from mcpkit_search import Corpus

from .. import Postings

__all__ = ["REBUILD_POSTINGS", "SWEEP_SLACK", "SWEEP_STEP", "MemoryIndex"]

#: Stale postings a bucket holds beyond its current ones before a sweep starts.
SWEEP_SLACK = 64
#: Current postings below which a sweep rebuilds the lists in one call rather than filtering them in steps.
REBUILD_POSTINGS = 4096
#: Postings a call filters, at least (whole lists), while a sweep in steps is under way.
SWEEP_STEP = 256

_Document = tuple[str, Postings]


class MemoryIndex:
    """One bucket's documents (``docs``: key -> its current document) and their postings lists.

    ``length`` is the total length of the current documents; ``current`` and ``stale`` count postings.
    ``rebuild_postings`` is ``REBUILD_POSTINGS`` unless given (tests give 0, to sweep in steps).
    """

    __slots__ = ("_queue", "current", "docs", "length", "rebuild_postings", "stale", "terms")

    def __init__(self, rebuild_postings: int = REBUILD_POSTINGS) -> None:
        self.rebuild_postings = rebuild_postings
        self.docs: dict[str, _Document] = {}
        self.terms: dict[int, list[_Document]] = {}
        self.length = 0
        self.current = 0
        self.stale = 0
        self._queue: list[int] = []  # the terms whose lists the sweep under way has still to filter

    def put(self, key: str, postings: Postings) -> None:
        """Make ``postings`` the document of ``key`` (a value written with these words)."""
        was = self.docs.get(key)
        if was is not None:
            if was[1] == postings:
                return  # the same words as before (a value written again): its document stands
            self.remove(key)
        document = (key, postings)
        self.docs[key] = document
        self.length += postings.length
        self.current += len(postings.terms)
        terms = self.terms
        for term in postings.terms:
            held = terms.get(term)
            if held is None:
                terms[term] = [document]
            else:
                held.append(document)

    def remove(self, key: str) -> None:
        """``key`` has no document any more (its value went, or was written without postings)."""
        was = self.docs.pop(key, None)
        if was is None:
            return
        postings = was[1]
        self.length -= postings.length
        self.current -= len(postings.terms)
        self.stale += len(postings.terms)
        if self._queue:
            self._sweep_step()
        elif self.stale > self.current + SWEEP_SLACK:
            if self.current < self.rebuild_postings:
                self.rebuild()
            else:
                self._queue = list(self.terms)
                self._sweep_step()

    def rebuild(self) -> None:
        """Build the lists again from the current documents alone (and drop a sweep under way)."""
        terms: dict[int, list[_Document]] = {}
        for document in self.docs.values():
            for term in document[1].terms:
                held = terms.get(term)
                if held is None:
                    terms[term] = [document]
                else:
                    held.append(document)
        self.terms, self.stale, self._queue = terms, 0, []

    def _sweep_step(self) -> None:
        docs, terms, queue = self.docs, self.terms, self._queue
        filtered = 0
        while queue and filtered < SWEEP_STEP:
            term = queue.pop()
            held = terms.get(term)
            if held is None:
                continue
            filtered += len(held)
            kept = [document for document in held if docs.get(document[0]) is document]
            self.stale -= len(held) - len(kept)
            if kept:
                terms[term] = kept
            else:
                del terms[term]

    def corpus(self, terms: Sequence[int]) -> Corpus:
        """The current documents' statistics, and for each of ``terms`` its (key, count, length) postings."""
        if self._queue:
            self._sweep_step()
        docs, found = self.docs, {}
        for term in terms:
            held = self.terms.get(term)
            if held is not None:
                hits = [(doc[0], doc[1].terms[term], doc[1].length) for doc in held if docs.get(doc[0]) is doc]
                if hits:
                    found[term] = hits
        return Corpus(len(docs), self.length, found)

    def narrowed(self, terms: Sequence[int], within: Sequence[Sequence[int]]) -> tuple[Corpus, tuple[int, ...]]:
        """``corpus`` with only the postings of the documents holding a term of every group of ``within``, and how
        many current documents hold each of ``terms`` (the whole bucket's counts).

        Each group's holders are gathered from its terms' lists; when they are few, their postings are read from
        their own documents, not from the terms' lists (whose lengths are then the counts: no stale posting)."""
        docs, allowed = self.docs, None
        for group in within:
            allowed = {
                document[0]
                for term in group
                for document in self.terms.get(term, ())
                if docs.get(document[0]) is document and (allowed is None or document[0] in allowed)
            }
        allowed = allowed or set()
        listed = [len(self.terms.get(term, ())) for term in terms]
        if not self.stale and not self._queue and len(allowed) * len(terms) < sum(listed):
            found: dict[int, list[tuple[Hashable, int, int]]] = {}
            distinct = list(dict.fromkeys(terms))
            for key in allowed:
                postings = docs[key][1]
                for term in distinct:
                    count = postings.terms.get(term)
                    if count:
                        found.setdefault(term, []).append((key, count, postings.length))
            return Corpus(len(docs), self.length, found), tuple(listed)
        corpus = self.corpus(terms)
        frequencies = tuple(len(corpus.postings.get(term, ())) for term in terms)
        held = {}
        for term, hits in corpus.postings.items():
            kept = [hit for hit in hits if hit[0] in allowed]
            if kept:
                held[term] = kept
        return Corpus(corpus.documents, corpus.length, held), frequencies
