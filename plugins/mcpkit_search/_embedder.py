"""Embedders: text to vectors, for search by meaning. The protocol, the text a value is embedded as, and vectors.

A vector is kept as ``tag (4 bytes) | scale (float32) | components (int8)``:
the unit-length vector divided by ``scale`` and rounded, so each component
takes one byte (a quarter of float32) and a cosine similarity comes out within
about 0.01 of the exact one. The tag names the model (a hash of
``Embedder.name``), so vectors of another model (a server switched to a new
one) are never compared with the query's; they count as missing, and their
texts are embedded again when searched.

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

if TYPE_CHECKING:
    import numpy
    import numpy.typing

__all__ = [
    "MAX_EMBED_CHARS",
    "TAG_BYTES",
    "Embedder",
    "dimensions_of",
    "document_text",
    "pack_vector",
    "tag_of",
    "unpack_vectors",
]

#: The longest text given to an embedder, in characters; models read a few hundred words at most.
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
    the server starts (searches go by words alone until it returns), and ``min_similarity``, the cosine
    similarity above which a value matches a query by meaning (default 0: what the model calls unrelated
    depends on the model, so set it).
    """

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


def document_text(key: str, value: Any) -> str:
    """What a kept value is embedded as: its key's words, then the strings and numbers inside the value."""
    words = _SEPARATORS.sub(" ", key).strip()
    text = " ".join([words, *texts_of(value)]) if words else " ".join(texts_of(value))
    return text[:MAX_EMBED_CHARS]


def tag_of(name: str) -> bytes:
    """The 4 bytes that name a model in the vectors it made."""
    return hashlib.blake2b(name.encode(), digest_size=TAG_BYTES).digest()


def pack_vector(name: str, vector: Sequence[float]) -> bytes:
    """A vector as kept: the model's tag, then its unit-length components quantised to int8 with one scale."""
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
    return tag_of(name) + struct.pack("<f", scale) + quantised


def dimensions_of(packed: bytes) -> int:
    """How many components a packed vector has."""
    return max(len(packed) - _HEAD_BYTES, 0)


def unpack_vectors(name: str, packed: Sequence[bytes], dimensions: int) -> tuple[numpy.typing.NDArray[Any], list[int]]:
    """The kept vectors of model ``name`` with ``dimensions`` components, as rows, and which of ``packed`` they are.

    Vectors of another model, of another length, or missing (empty bytes) are left out.
    """
    import numpy

    tag, size = tag_of(name), _HEAD_BYTES + dimensions
    rows = [number for number, data in enumerate(packed) if len(data) == size and data[:TAG_BYTES] == tag]
    if not rows:
        return numpy.zeros((0, dimensions), dtype=numpy.float32), rows
    heads = b"".join(packed[number][TAG_BYTES:_HEAD_BYTES] for number in rows)
    scales = numpy.frombuffer(heads, dtype="<f4").reshape(len(rows), 1)
    joined = b"".join(packed[number][_HEAD_BYTES:] for number in rows)
    components = numpy.frombuffer(joined, dtype=numpy.int8).reshape(len(rows), dimensions)
    return components.astype(numpy.float32) * scales, rows
