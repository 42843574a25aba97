"""Search over one place's values: ranked by words, by meaning or both, and how many values a place holds."""

from ._census import indexed_count
from ._kept import Kept
from ._leaning import PREFERRED_BOOST, Leaning, Window
from ._match import MAX_SEARCH_LIMIT, MODES, Explanation, Match, Matches, SearchMode
from ._search import search

__all__ = [
    "MAX_SEARCH_LIMIT",
    "MODES",
    "PREFERRED_BOOST",
    "Explanation",
    "Kept",
    "Leaning",
    "Match",
    "Matches",
    "SearchMode",
    "Window",
    "indexed_count",
    "search",
]
