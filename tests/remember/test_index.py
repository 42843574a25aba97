"""The blind index's word cache: bounded across buckets, and never changing what a value's postings are."""

from __future__ import annotations

import json

import pytest

import mcpkit_storage.index._index as index_module
from mcpkit_search import Analyzer
from mcpkit_storage.index._facets import facet_words
from mcpkit_storage.index._index import BlindIndex
from mcpkit_storage.sealing._keyring import Keyring

SECRET = "test-index-secret-0123456789abcdef"


def expected(keyring: Keyring, owner: str, bucket: str, key: str, value: object) -> dict[int, int]:
    """The postings computed the slow way: the analyser's counts, each term blinded on its own."""
    counts = Analyzer().value_counts(key, value)
    return {keyring.blind(0, owner, bucket, [term])[0]: count for term, count in counts.items()}


@pytest.mark.parametrize("limit", [3, 40, index_module.WORDS_CACHED])
def test_postings_are_the_same_whatever_the_cache_holds(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(index_module, "WORDS_CACHED", limit)
    keyring = Keyring([SECRET])
    index = BlindIndex(keyring)
    values = [
        "Prefers short replies in French, no greetings",
        {"ticketId": "T-1042", "notes": ["refund refund", "Café au lait"], "count": 3},
        "the of and",
        "preferences PREFERRED prefers",
    ]
    for round_ in range(3):
        for number in range(12):
            address = keyring.locate(f"static:user{number % 5}", f"user{number % 3}", "note")[0]
            value = values[(number + round_) % len(values)]
            postings = index.postings(address, "note", json.dumps(value), 1.7e9 + number * 86_400, "user")
            want = expected(keyring, address.owner, address.bucket, "note", value)
            facets = keyring.blind(0, address.owner, address.bucket, facet_words(1.7e9 + number * 86_400, "user"))
            assert dict(postings.terms) == want | dict.fromkeys(facets, 1)
            assert postings.length == sum(want.values())  # the facets count in no word's score
            assert index._words <= limit
            assert index._words == sum(len(words) for words in index._buckets.values())


def test_a_bucket_with_more_words_than_the_cache_starts_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "WORDS_CACHED", 5)
    keyring = Keyring([SECRET])
    index = BlindIndex(keyring)
    address = keyring.locate("static:nour", "user", "note")[0]
    text = " ".join(f"word{n}" for n in range(20))
    postings = index.postings(address, "note", json.dumps(text), 0.0, None)
    facets = keyring.blind(0, address.owner, address.bucket, facet_words(0.0, None))
    assert dict(postings.terms) == expected(keyring, address.owner, address.bucket, "note", text) | dict.fromkeys(
        facets, 1
    )
    assert index._words <= 5
