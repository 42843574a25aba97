"""``Indexing``: which of a vault's values are searchable, and the postings a write of one keeps in the store."""

from __future__ import annotations

from ..base import indexed_namespaces
from ..index import BlindIndex
from ..sealing import Keyring, event_of
from ..stores import Address, Postings

__all__ = ["Indexing"]


class Indexing:
    """The blind index of a keyring, and whether every value is indexed or only the indexed namespaces'."""

    __slots__ = ("index", "search_all")

    def __init__(self, keyring: Keyring, *, search_all: bool, keys: bool) -> None:
        #: Turns values into postings and queries into blind terms.
        self.index = BlindIndex(keyring, keys=keys)
        #: Whether every value is indexed for search (``RememberPlugin(search=True)``); the memory tools' notes
        #: always are.
        self.search_all = search_all

    def searchable(self, bucket: str) -> bool:
        """Whether values of this bucket are indexed (and so can be searched)."""
        return self.search_all or bucket.startswith(indexed_namespaces())

    async def postings(
        self, address: Address, key: str, value_json: str | bytes, meta: bytes, written_at: float
    ) -> Postings:
        """What a value written now at ``address`` adds to the index (long values analysed in a worker thread): its
        words, and the facets of its event time and source (from its sealed ``meta``, else when it was written)."""
        return await self.index.postings_of(address, key, value_json, *event_of(meta, written_at))
