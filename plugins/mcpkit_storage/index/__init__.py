"""What makes values searchable without opening them: the blind index of hashed words, and the vectors of search by
meaning in sealed shards."""

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
    "QUERY_FAILED",
    "BlindIndex",
    "Change",
    "EmbedderBusyError",
    "EmbedderFailedError",
    "Leaf",
    "Semantic",
    "Shards",
    "is_shard_key",
]
