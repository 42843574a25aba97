"""mcpkit_search: the text analysis and ranking that remembered values (and histories) are searched with.

It knows nothing of stores or encryption: ``Analyzer`` turns text into terms,
``bm25`` ranks documents from the postings an index returns for a query's terms.
"""

from ._analyzer import Analyzer, fold
from ._bm25 import Corpus, bm25
from ._stop_words import ENGLISH_STOP_WORDS

__all__ = ["ENGLISH_STOP_WORDS", "Analyzer", "Corpus", "bm25", "fold"]
