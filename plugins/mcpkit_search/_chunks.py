"""Chunks: a long text cut into overlapping windows of words, so an embedder reads all of it.

Small embedding models read a few hundred word pieces and drop the rest: one
vector of a long value stands for its opening. A value is embedded instead as
windows of ``CHUNK_WORDS`` words, each sharing ``CHUNK_OVERLAP`` words with the
one before (a fact cut at a window's edge is whole in the next), and scores by
its best window. Every window is kept: nothing of a value is left unembedded.
"""

from __future__ import annotations

import re

__all__ = ["CHUNK_OVERLAP", "CHUNK_WORDS", "chunks"]

#: Words per window: about 160 to 200 word pieces of English, inside the 256 all-MiniLM-L6-v2 reads.
CHUNK_WORDS = 120

#: Words a window shares with the one before it.
CHUNK_OVERLAP = 30

_SPACE = re.compile(r"\S+")


def chunks(text: str, words: int = CHUNK_WORDS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """``text`` as overlapping windows of ``words`` words (one window when it is that short); [] for no words."""
    if not 0 <= overlap < words:
        raise ValueError(f"a window of {words} words cannot overlap the one before by {overlap} words")
    found = _SPACE.findall(text)
    if len(found) <= words:
        return [" ".join(found)] if found else []
    step = words - overlap
    starts = range(0, len(found) - overlap, step)
    return [" ".join(found[start : start + words]) for start in starts]
