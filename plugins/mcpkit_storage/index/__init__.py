"""What makes values searchable without opening them: the blind index of hashed words, and the vectors of search by
meaning in sealed shards."""

from ._facets import MAX_WINDOW_WORDS, source_words, top_words, window_words
from ._index import BlindIndex
from ._scheduler import EmbedderBusyError
from ._semantic import (
    BUSY,
    DEFAULT_MIN_SIMILARITY,
    MAX_EMBEDDED_PER_SEARCH,
    QUERY_FAILED,
    EmbedderFailedError,
    Semantic,
)
from ._shard_layout import Leaf, is_shard_key
from ._shard_tree import Change, Shards

__all__ = [
    "BUSY",
    "DEFAULT_MIN_SIMILARITY",
    "MAX_EMBEDDED_PER_SEARCH",
    "MAX_WINDOW_WORDS",
    "QUERY_FAILED",
    "BlindIndex",
    "Change",
    "EmbedderBusyError",
    "EmbedderFailedError",
    "Leaf",
    "Semantic",
    "Shards",
    "is_shard_key",
    "source_words",
    "top_words",
    "window_words",
]
