"""The pieces of search by meaning that need no store: chunks of a long text, packed vectors, rank fusion."""

from __future__ import annotations

import math
import random

import pytest

from mcpkit_search import (
    CHUNK_OVERLAP,
    CHUNK_WORDS,
    chunks,
    document_chunks,
    document_text,
    fuse,
    fuse_dense,
    pack_vector,
    pack_vectors,
    parts,
    unpack_vectors,
    vectors_in,
)


def test_a_short_text_is_one_chunk_and_no_words_none() -> None:
    assert chunks("Prefers short replies") == ["Prefers short replies"]
    assert chunks("  \n ") == []


def test_every_word_of_a_long_text_is_in_some_chunk_and_windows_overlap() -> None:
    words = [f"w{number}" for number in range(1000)]
    windows = chunks(" ".join(words))
    assert {word for window in windows for word in window.split()} == set(words)  # nothing dropped
    assert all(len(window.split()) <= CHUNK_WORDS for window in windows)
    first, second = windows[0].split(), windows[1].split()
    assert first[-CHUNK_OVERLAP:] == second[:CHUNK_OVERLAP]
    assert windows[-1].split()[-1] == "w999"


def test_a_window_cannot_overlap_by_its_whole_length() -> None:
    with pytest.raises(ValueError, match="cannot overlap the one before by 10 words"):
        chunks("a b c", words=10, overlap=10)


def test_a_long_value_is_embedded_whole_not_by_its_opening() -> None:
    value = {"notes": " ".join(["filler"] * 3000) + " the secret word is zanzibar"}
    assert "zanzibar" in document_text("k", value)
    assert "zanzibar" in document_chunks("k", value)[-1]


def test_keys_can_be_left_out_of_the_embedded_text() -> None:
    assert document_text("pref:reply-length", "short") == "pref reply length short"
    assert document_text("pref:reply-length", "short", keys=False) == "short"


def test_a_values_chunk_vectors_unpack_as_rows_of_that_value() -> None:
    single = pack_vector("m", [1.0, 0.0, 0.0])
    several = pack_vectors("m", [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert vectors_in(single, 3) == 1
    assert vectors_in(several, 3) == 2
    assert vectors_in(several, 4) == 0  # another length: not this model's vectors
    rows, owners = unpack_vectors("m", [several, b"", single, pack_vector("other", [1.0, 0.0, 0.0])], 3)
    assert owners == [0, 0, 2]
    assert rows.round(2).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]


def test_vectors_of_different_lengths_for_one_value_are_refused() -> None:
    with pytest.raises(ValueError, match=r"returned vectors of \[2, 3\] components for one value"):
        pack_vectors("m", [[1.0, 0.0], [1.0, 0.0, 0.0]])


def test_fusion_puts_the_best_at_one_the_worst_at_zero_and_weighs_the_sides() -> None:
    lexical = {"a": 40.0, "b": 3.0}
    semantic = {"b": 0.9, "c": 0.8, "a": 0.1}
    fused = fuse(lexical, semantic, weight=0.5)
    assert max(fused.values()) == 1.0
    assert min(fused.values()) == 0.0
    assert fused["b"] == 1.0  # first by meaning, found by words too
    assert fused["c"] == 0.0  # found by meaning alone: BM25's worst on the other side
    assert fuse({"a": 1.0}, {"a": 0.3})["a"] == 1.0
    by_words = fuse(lexical, semantic, weight=0.0)
    assert by_words == {"a": 1.0, "b": 0.0, "c": 0.0}  # c, not found by words, counts as BM25's worst
    by_meaning = fuse(lexical, semantic, weight=1.0)
    assert by_meaning["b"] > by_meaning["c"] > by_meaning["a"]


def test_fusion_does_not_depend_on_either_sides_scale() -> None:
    # BM25 scores of long values run into the hundreds, cosines stay under 1: standard scores make them compare.
    lexical = {"a": 12.0, "b": 7.0, "c": 1.0}
    semantic = {"a": 0.31, "b": 0.52, "c": 0.49, "d": 0.45}
    ten_times = fuse({doc: 10 * score for doc, score in lexical.items()}, semantic)
    assert ten_times == pytest.approx(fuse(lexical, semantic))


def test_a_weight_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"from 0 to 1, not 1\.5"):
        fuse({}, {}, weight=1.5)


@pytest.mark.parametrize("seed", range(12))
def test_fusion_over_numbered_documents_in_numpy_gives_what_fuse_gives(seed: int) -> None:
    import numpy

    rng = random.Random(seed)
    count = rng.choice([1, 2, 50])
    semantic = numpy.array([rng.choice([numpy.nan, rng.random(), 0.5]) for _ in range(count)])
    lexical = {
        number: rng.choice([3.0, rng.random() * 10]) for number in rng.sample(range(count), rng.randint(0, count))
    }
    weight = rng.choice([0.0, 0.4, 1.0])
    expected = fuse(lexical, {n: float(s) for n, s in enumerate(semantic) if not math.isnan(s)}, weight=weight)
    fused = fuse_dense(lexical, semantic, weight=weight)
    assert {n for n in range(count) if not math.isnan(fused[n])} == set(expected)
    assert [fused[n] for n in sorted(expected)] == pytest.approx([expected[n] for n in sorted(expected)], abs=1e-9)


def clear_winner_by_words() -> tuple[dict[str, float], dict[str, float]]:
    """Twenty documents: "x" first by words far ahead of the rest, but well down by meaning."""
    lexical = {f"d{number}": 5.0 + number * 0.1 for number in range(19)} | {"x": 30.0}
    semantic = {f"d{number}": 0.30 + number * 0.01 for number in range(19)} | {"x": 0.2}
    return lexical, semantic


def test_a_side_that_ranks_a_document_first_by_a_clear_margin_is_not_buried() -> None:
    lexical, semantic = clear_winner_by_words()
    fused = fuse(lexical, semantic, weight=0.6)  # meaning weighs more: by the sum alone, x would rank 9th
    assert max(fused, key=fused.__getitem__) == "x"
    assert fused["x"] == 1.0


def test_without_a_clear_margin_the_sum_decides() -> None:
    lexical, semantic = clear_winner_by_words()
    lexical["x"] = 6.95  # first by words, but by less than one spread
    fused = fuse(lexical, semantic, weight=0.6)
    assert max(fused, key=fused.__getitem__) == "d18"


def test_a_side_that_weighs_nothing_lifts_nothing_and_few_documents_say_nothing_of_a_margin() -> None:
    lexical, semantic = clear_winner_by_words()
    by_meaning = fuse(lexical, semantic, weight=1.0)
    assert max(by_meaning, key=by_meaning.__getitem__) == "d18"
    few = fuse({"a": 40.0, "b": 3.0}, {"b": 0.9, "c": 0.8, "a": 0.1}, weight=0.5)
    assert max(few, key=few.__getitem__) == "b"


def test_the_margin_rule_in_numpy_gives_what_fuse_gives() -> None:
    import numpy

    lexical, semantic = clear_winner_by_words()
    names = sorted(semantic)
    dense = fuse_dense(
        {names.index(doc): score for doc, score in lexical.items()},
        numpy.array([semantic[doc] for doc in names]),
        weight=0.6,
    )
    expected = fuse(lexical, semantic, weight=0.6)
    assert list(dense) == pytest.approx([expected[doc] for doc in names], abs=1e-9)
    assert dense[names.index("x")] == 1.0


def test_the_parts_of_a_lifted_document_add_up_to_its_fused_score() -> None:
    lexical, semantic = clear_winner_by_words()
    fused = fuse(lexical, semantic, weight=0.6)
    shares = parts(lexical, semantic, fused, weight=0.6)
    assert shares["x"].lifted_by_margin > 0  # by the two sides alone it would rank 9th
    assert shares["x"].lexical + shares["x"].semantic < shares["d18"].lexical + shares["d18"].semantic
    assert {doc: share.fused for doc, share in shares.items()} == pytest.approx(fused, abs=1e-12)
    assert all(share.lifted_by_margin == 0.0 for doc, share in shares.items() if doc != "x")


@pytest.mark.parametrize("seed", range(20))
def test_the_parts_add_up_to_the_fused_score_of_every_document(seed: int) -> None:
    rng = random.Random(seed)
    lexical = {f"d{n}": rng.expovariate(0.3) for n in range(40) if rng.random() < 0.5}
    semantic = {f"d{n}": rng.uniform(-0.1, 0.9) for n in range(40)}
    weight = rng.choice([0.25, 0.4, 0.75])
    fused = fuse(lexical, semantic, weight=weight)
    shares = parts(lexical, semantic, fused, weight=weight)
    assert {doc: share.fused for doc, share in shares.items()} == pytest.approx(fused, abs=1e-12)
