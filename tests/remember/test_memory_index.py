"""The memory store's append-only index: exact as a plain inverted index at every step, and swept when stale."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit_search import Corpus
from mcpkit_storage.stores._store import Postings
from mcpkit_storage.stores.memory._memory_index import REBUILD_POSTINGS, SWEEP_SLACK, SWEEP_STEP, MemoryIndex

TERMS = list(range(1, 9))


def postings(counts: dict[int, int]) -> Postings:
    return Postings(counts, sum(counts.values()))


def exact(docs: dict[str, Postings], asked: list[int]) -> Corpus:
    """The corpus a plain inverted index, built from scratch, gives."""
    found = {}
    for term in asked:
        hits = sorted((key, p.terms[term], p.length) for key, p in docs.items() if term in p.terms)
        if hits:
            found[term] = hits
    return Corpus(len(docs), sum(p.length for p in docs.values()), found)


def sorted_corpus(corpus: Corpus) -> Corpus:
    return Corpus(corpus.documents, corpus.length, {t: sorted(hits) for t, hits in corpus.postings.items()})


OPERATIONS = st.lists(  # long enough for sweeps to start (more than SWEEP_SLACK stale postings) and go on
    st.tuples(
        st.sampled_from(["put", "put", "put", "remove"]),
        st.sampled_from(["a", "b", "c", "d"]),
        st.dictionaries(st.sampled_from(TERMS), st.integers(1, 3), min_size=1, max_size=5),
    ),
    max_size=150,
)


#: Both ways of sweeping: lists rebuilt from the current documents (small buckets), and filtered in steps.
REBUILDS = st.sampled_from([REBUILD_POSTINGS, 0])


@settings(max_examples=400, deadline=None)
@given(OPERATIONS, REBUILDS, st.booleans())
def test_every_step_gives_what_an_exact_index_gives(
    operations: list[tuple[str, str, dict[int, int]]], rebuild_postings: int, search_each_step: bool
) -> None:
    """Searched after every step (searches take sweeps further too) or only at the end (writes alone do)."""
    index, model = MemoryIndex(rebuild_postings), {}
    for operation, key, counts in operations:
        if operation == "put":
            model[key] = postings(counts)
            index.put(key, model[key])
        else:
            index.remove(key)
            model.pop(key, None)
        assert index.current == sum(len(p.terms) for p in model.values())
        assert sum(map(len, index.terms.values())) == index.current + index.stale
        if search_each_step:
            assert sorted_corpus(index.corpus(TERMS)) == exact(model, TERMS)
    assert sorted_corpus(index.corpus(TERMS)) == exact(model, TERMS)


@pytest.mark.parametrize("rebuild_postings", [REBUILD_POSTINGS, 0])
def test_stale_postings_stay_within_the_current_ones_plus_the_slack(rebuild_postings: int) -> None:
    """A key rewritten many times (a new word each time) keeps its lists short: they are swept as it goes."""
    index = MemoryIndex(rebuild_postings)
    words = {term: 1 for term in range(20)}
    for turn in range(2000):
        index.put("note", postings({**words, 1000 + turn: 1}))  # each time one word differs: a new document
        assert index.corpus([0]).postings[0] == [("note", 1, 21)]  # only the current one is found
        assert index.stale <= index.current + SWEEP_SLACK + SWEEP_STEP
    assert sum(map(len, index.terms.values())) == index.current + index.stale
    assert len(index.terms[0]) < 2000  # swept along the way (without sweeps: one entry per write)


def test_sweeps_in_steps_filter_whole_lists_and_keep_the_count_exact() -> None:
    index, filtered = MemoryIndex(rebuild_postings=0), 0
    for key in range(100):
        index.put(str(key), postings({1: 1, 2: 1, key + 10: 1}))
    for key in range(100):
        stale = index.stale
        index.remove(str(key))  # every document stale at the end: sweeps start and go on at removals
        filtered += index.stale < stale + 3
        assert sum(map(len, index.terms.values())) == index.current + index.stale
        assert index.stale <= index.current + SWEEP_SLACK + SWEEP_STEP
    for _ in range(100):  # each search takes a sweep under way one step further
        index.corpus([1])
    assert filtered > 0
    assert index.current == 0
    assert index.stale <= SWEEP_SLACK  # what is left came after the lists it was in were filtered
    assert sum(map(len, index.terms.values())) == index.stale


def test_a_small_bucket_is_rebuilt_at_once() -> None:
    index, rebuilt = MemoryIndex(), 0
    for turn in range(SWEEP_SLACK):
        index.put("note", postings({turn: 1, 10_000 + turn: 1}))  # two new words at each write
        rebuilt += index.stale == 0  # the sweep that came when stale passed the slack rebuilt the lists there
        assert index.stale <= index.current + SWEEP_SLACK
    assert rebuilt > 1


def test_the_same_words_again_keep_the_document() -> None:
    index = MemoryIndex()
    index.put("note", postings({1: 1, 2: 1}))
    index.put("note", postings({1: 1, 2: 1}))  # another value with the same words
    assert index.stale == 0
    assert index.terms[1] == [("note", postings({1: 1, 2: 1}))]


def test_a_removed_key_is_gone_from_statistics_at_once() -> None:
    index = MemoryIndex()
    index.put("a", postings({1: 2}))
    index.put("b", postings({1: 1, 2: 1}))
    index.remove("a")
    assert index.corpus([1, 2]) == Corpus(1, 2, {1: [("b", 1, 2)], 2: [("b", 1, 2)]})
    index.remove("a")  # removing again changes nothing
    assert (index.current, index.stale, index.length) == (2, 1, 2)
