"""What a search returns: its matches (``Match``, ``Matches``), why each ranked (``Explanation``), and its modes; and
a search by meaning as asked (``Asked``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

if TYPE_CHECKING:
    from mcpkit_search import Parts

    from ..sealing import Payload, Provenance

__all__ = ["MAX_SEARCH_LIMIT", "MODES", "Asked", "Explanation", "Match", "Matches", "SearchMode", "explained", "ranks"]

_Doc = TypeVar("_Doc", bound=Hashable)

#: The most matches one search returns.
MAX_SEARCH_LIMIT = 100

SearchMode = Literal["lexical", "semantic", "hybrid"]

#: The search modes: by words (BM25), by meaning (the embedder), or both fused.
MODES: tuple[SearchMode, ...] = ("lexical", "semantic", "hybrid")


class Explanation(NamedTuple):
    """Why a match ranked where it did (``search(..., explain=True)``): each side's score and rank (1 is the
    best; None: that side did not find it, or was not asked), and the chunk of the value its meaning matched
    best (0 is the first; None without an embedder).

    ``windows_embedded``: for a value too long to embed whole, how many of its first windows were embedded (a match
    past them was found by its words alone); None when every window was, or none.

    ``terms``: the query's words the value holds, each with its weight (BM25's IDF in the caller's scope: a rarer
    word weighs more). ``weight``: the semantic side's weight (``hybrid``). ``lexical_part``, ``semantic_part`` and
    ``lifted_by_margin`` (``hybrid``): each side's share of the fused score and what the fusion's margin rule added
    (0 unless it lifted the match to the rank one side gave it); the fused score is their sum rescaled so the
    query's best match is 1 and its worst 0 (``mcpkit_search.parts``). ``window``: the text of the window that
    matched (by meaning, else the one holding the most of the query's weight). ``relevance``: a score comparable
    across queries, 0 to 1: the share of the query's weight the value holds (``lexical``), the similarity
    (``semantic``), or both weighted (``hybrid``). ``preferred``: the value happened in the window the query's own
    dates named, so its score is doubled (``PREFERRED_BOOST``; every other field is as before that).
    """

    mode: SearchMode
    lexical: float | None
    lexical_rank: int | None
    semantic: float | None
    semantic_rank: int | None
    chunk: int | None
    windows_embedded: int | None = None
    terms: tuple[tuple[str, float], ...] = ()
    weight: float | None = None
    lexical_part: float | None = None
    semantic_part: float | None = None
    window: str | None = None
    relevance: float | None = None
    lifted_by_margin: float | None = None
    preferred: bool = False


class Match(NamedTuple):
    """One value a search found: its key, the value, its score (higher is better) and when it was written.

    The score is BM25's in ``lexical`` mode, the cosine similarity in ``semantic`` mode, and the fused score
    (``mcpkit_search.fuse``) in ``hybrid`` mode. ``why`` says how it was reached, when asked (``explain=True``).

    ``updated_at`` is None for a value written by mcpkit 0.1; ``expires_at`` None for a value kept until forgotten.
    ``weak``: in ``semantic`` mode, a value under the embedder's ``min_similarity``, returned because too few were
    above it to fill ``limit`` (the best of the rest, ranked after every match above it).
    ``provenance``: where the value came from (None: written before mcpkit kept it; docs/provenance.md).
    """

    key: str
    value: Any
    score: float
    updated_at: float | None
    expires_at: float | None
    why: Explanation | None = None
    weak: bool = False
    provenance: Provenance | None = None

    @property
    def source(self) -> str | None:
        """``user``, ``tool``, ``model``, ``import`` or ``external`` (None: not known)."""
        return None if self.provenance is None else self.provenance.source


class Matches(list[Match]):
    """A search's matches, best first; ``note`` says why the search went by words alone though search by meaning
    is on (its model still loading, or failing, or busy with other callers' searches), else it is None.
    ``window``: the event times searched (since, until; seconds, None where open), None when the search had none;
    ``preferred``: the event times the query's own dates named, whose values ranked higher (None: none)."""

    def __init__(
        self,
        matches: Iterable[Match] = (),
        note: str | None = None,
        window: tuple[float | None, float | None] | None = None,
    ) -> None:
        super().__init__(matches)
        self.note = note
        self.window = window
        self.preferred: tuple[float | None, float | None] | None = None  # a ``Window``


class Asked(NamedTuple):
    """A search by meaning as asked: the query's words and its vector, the mode, the semantic side's weight, whose
    share of the embedder it takes, and whether each match says why."""

    words: Sequence[str]
    vector: bytes
    mode: SearchMode
    weight: float
    caller: str
    explain: bool


def ranks(scores: Mapping[_Doc, float]) -> dict[_Doc, int]:
    """Each document's place (1 is the best) in a ranking by score."""
    ordered = sorted(scores, key=lambda doc: -scores[doc])
    return {doc: rank for rank, doc in enumerate(ordered, start=1)}


def explained(
    mode: SearchMode,
    best: Sequence[_Doc],
    opened: Mapping[_Doc, Payload],
    scores: Mapping[_Doc, float],
    lexical: Mapping[_Doc, float],
    semantic: Mapping[_Doc, float],
    chunks: Mapping[_Doc, int],
    semantic_ranks: Mapping[_Doc, int] | None = None,
    *,
    windows: Callable[[Payload], int | None] | None = None,
    weak: Collection[_Doc] = (),
    shares: Mapping[_Doc, Parts] | None = None,
) -> list[Match]:
    """The matches of a search by meaning (``best``, opened, in order), each with its ``Explanation``;
    ``semantic_ranks`` when worked out already (else from ``semantic``); ``windows``: the ``windows_embedded`` of
    a value the semantic side scored, when asked to explain (else left None); ``weak``: the matches under
    ``min_similarity`` (``Match.weak``); ``shares``: each one's two parts of the fused score (``hybrid``, explained)."""
    lexical_ranks = ranks(lexical)
    if semantic_ranks is None:
        semantic_ranks = ranks(semantic)
    return [
        Match(
            opened[doc].key,
            opened[doc].value(),
            scores[doc],
            opened[doc].written_at,
            opened[doc].expires_at,
            Explanation(
                mode,
                lexical.get(doc),
                lexical_ranks.get(doc),
                semantic.get(doc),
                semantic_ranks.get(doc),
                chunks.get(doc),
                None if windows is None or doc not in semantic else windows(opened[doc]),
                lexical_part=None if shares is None else shares[doc].lexical,
                semantic_part=None if shares is None else shares[doc].semantic,
                lifted_by_margin=None if shares is None else shares[doc].lifted_by_margin,
            ),
            doc in weak,
            opened[doc].provenance,
        )
        for doc in best
    ]
