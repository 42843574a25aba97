"""Embedders: text to vectors, for search by meaning. The protocol, the text a value is embedded as, and vectors.

A value's vectors (one per chunk of its text, ``_chunks``) are kept as
``tag (4 bytes)`` then, for each, ``scale (float32) | components (int8)``: the
unit-length vector divided by ``scale`` and rounded, so each component takes
one byte (a quarter of float32) and a cosine similarity comes out within about
0.01 of the exact one. A single vector (a query's, or a short value's) is the
case of one chunk. The tag names the model (a hash of ``Embedder.name``), so
vectors of another model (a server switched to a new one) are never compared
with the query's; they count as missing, and their texts are embedded again
when searched.

numpy does the vector work; it comes with the ``semantic`` extra and is imported
only where an embedder is used, so the default install does not need it.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._analyzer import texts_of
from ._chunks import chunks

if TYPE_CHECKING:
    import numpy
    import numpy.typing

__all__ = [
    "MAX_EMBED_CHARS",
    "TAG_BYTES",
    "Embedder",
    "dimensions_of",
    "document_chunks",
    "document_text",
    "pack_vector",
    "pack_vectors",
    "tag_of",
    "unpack_vectors",
    "vectors_in",
]

#: The longest query given to an embedder, in characters (a value is cut into chunks instead: none is dropped).
MAX_EMBED_CHARS = 2048

#: The bytes of a model's tag at the head of each of its vectors, and of the tag and the scale together.
TAG_BYTES = 4
_HEAD_BYTES = TAG_BYTES + 4
_SEPARATORS = re.compile(r"[:_\-./]+")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose dot products say how alike the texts are in meaning.

    ``name`` identifies the model (vectors of different names are never compared); ``embed`` returns one
    vector per text, all of the same length (they need not be unit length: they are normalised when kept).
    An embedder may also define ``async def load(self) -> None``, which the plugin runs in the background when
    the server starts (searches go by words alone until it returns); ``min_similarity``, the cosine
    similarity above which a value matches a query by meaning (default 0: what the model calls unrelated
    depends on the model, so set it); ``async def embed_query(self, texts)``, for models that embed a
    query otherwise than a document (e5's "query: " prefix), else queries go through ``embed`` too; and
    ``concurrency``, how many embed calls may run at once (default 1: a local model uses every core for one; a
    hosted API may take more).
    """

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


def document_text(key: str, value: Any, *, keys: bool = True) -> str:
    """What a kept value is embedded as: its key's words (unless ``keys`` is false), then the strings and numbers
    inside the value; all of it (``document_chunks`` cuts it into what a model reads)."""
    words = _SEPARATORS.sub(" ", key).strip() if keys else ""
    return " ".join([words, *texts_of(value)]) if words else " ".join(texts_of(value))


def document_chunks(key: str, value: Any, *, keys: bool = True) -> list[str]:
    """The chunks a kept value is embedded as (``document_text`` in overlapping windows); one for a short value,
    and one (the key's words, or empty) for a value without words."""
    return chunks(document_text(key, value, keys=keys)) or [document_text(key, value, keys=keys)]


def tag_of(name: str) -> bytes:
    """The 4 bytes that name a model in the vectors it made."""
    return hashlib.blake2b(name.encode(), digest_size=TAG_BYTES).digest()


def pack_vector(name: str, vector: Sequence[float]) -> bytes:
    """A vector as kept: the model's tag, then its unit-length components quantised to int8 with one scale."""
    return tag_of(name) + _quantised(name, vector)


def pack_vectors(name: str, vectors: Sequence[Sequence[float]]) -> bytes:
    """A value's vectors (one per chunk, all of one length) as kept: the model's tag once, then each quantised."""
    if not vectors:
        raise ValueError(f"the embedder {name!r} returned no vector for a value")
    sizes = {len(vector) for vector in vectors}
    if len(sizes) != 1:
        raise ValueError(f"the embedder {name!r} returned vectors of {sorted(sizes)} components for one value")
    return tag_of(name) + b"".join(_quantised(name, vector) for vector in vectors)


def _quantised(name: str, vector: Sequence[float]) -> bytes:
    import numpy

    array = numpy.asarray(vector, dtype=numpy.float32)
    if array.ndim != 1 or not array.size or not numpy.isfinite(array).all():
        raise ValueError(f"the embedder {name!r} returned {array.shape} values, not one finite vector per text")
    norm = float(numpy.linalg.norm(array.astype(numpy.float64)))  # float64: large components do not overflow
    if norm == 0.0:
        raise ValueError(f"the embedder {name!r} returned a zero vector")
    unit = (array / norm).astype(numpy.float32)
    scale = float(numpy.abs(unit).max()) / 127.0
    quantised: bytes = numpy.rint(unit / scale).astype(numpy.int8).tobytes()
    return struct.pack("<f", scale) + quantised


def dimensions_of(packed: bytes) -> int:
    """How many components a packed single vector (a query's) has."""
    return max(len(packed) - _HEAD_BYTES, 0)


def vectors_in(packed: bytes, dimensions: int) -> int:
    """How many vectors of ``dimensions`` components ``packed`` holds (0: none, or not of that length)."""
    record = _HEAD_BYTES - TAG_BYTES + dimensions
    body = len(packed) - TAG_BYTES
    return body // record if body > 0 and body % record == 0 else 0


def unpack_vectors(name: str, packed: Sequence[bytes], dimensions: int) -> tuple[numpy.typing.NDArray[Any], list[int]]:
    """The kept vectors of model ``name`` with ``dimensions`` components, as rows, and which of ``packed`` each
    row comes from (a value of several chunks gives several rows).

    Vectors of another model, of another length, or missing (empty bytes) are left out.
    """
    import numpy

    tag, record = tag_of(name), _HEAD_BYTES - TAG_BYTES + dimensions
    owners: list[int] = []
    bodies = []
    for number, data in enumerate(packed):
        count = vectors_in(data, dimensions) if data[:TAG_BYTES] == tag else 0
        if count:
            owners += [number] * count
            bodies.append(data[TAG_BYTES:])
    if not owners:
        return numpy.zeros((0, dimensions), dtype=numpy.float32), owners
    records = numpy.frombuffer(b"".join(bodies), dtype=numpy.uint8).reshape(len(owners), record)
    scales = records[:, :4].copy().view("<f4").reshape(len(owners), 1)
    components = records[:, 4:].view(numpy.int8)
    return components.astype(numpy.float32) * scales, owners
