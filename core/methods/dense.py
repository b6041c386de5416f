"""The dense methods: one vector per chunk from the encoder, scored by cosine.

Their vectors come from ``core.methods.embedding.embed_chunks`` (naive, late,
contextual), which documents exactly what each encodes; each spec's ``embedding`` names
the functions of ``core.embed`` that compute its vectors and its cache variant. Defined
here and registered by the package, so the rest of the code asks the registry instead of
spelling the names out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.embed import contextual, late, naive
from core.methods import embedding
from core.methods.spec import COSINE, DenseEmbedding, IndexStep, MethodSpec, Progress

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.embed.records import ChunkVector
    from core.protocols import TextEncoder
    from core.provenance.types import Chunk, Document

_SUMMARIES = {
    "naive": "each chunk encoded alone",
    "late": "token states of the whole document, pooled per chunk (late chunking)",
    "contextual": "each chunk encoded alone, prefixed with the title and heading path",
}
_COLOURS = {"naive": "#5b7083", "late": "#f18f01", "contextual": "#3bb273"}
_ORDER = {"naive": 0, "contextual": 20, "late": 30}


def embed_step(method: str) -> IndexStep:
    """The index step of the dense method ``method``: ``core.methods.embedding.embed_chunks``
    (looked up at each call, a seam tests swap for a fake)."""

    def index(
        doc: Document,
        chunks: Sequence[Chunk],
        encoder: TextEncoder,
        *,
        progress: Progress | None = None,
        cache: VectorCache | None = None,
    ) -> list[ChunkVector]:
        return embedding.embed_chunks(doc, chunks, method, encoder, progress=progress, cache=cache)

    return index


def _embeddings() -> dict[str, DenseEmbedding]:
    return {
        "naive": DenseEmbedding(vectors=naive.naive_vectors, variant=naive.header_variant),
        "late": DenseEmbedding(
            vectors=late.late_chunk_vectors, variant=late.window_variant, windowed=True
        ),
        "contextual": DenseEmbedding(
            vectors=contextual.contextual_vectors,
            variant=contextual.prefix_variant,
            prefixed=True,
        ),
    }


def builtin_specs() -> list[MethodSpec]:
    """The built-in dense methods, for the package to register."""
    return [
        MethodSpec(
            name=name,
            family="dense",
            score=COSINE,
            summary=_SUMMARIES[name],
            colour=_COLOURS[name],
            order=_ORDER[name],
            index=embed_step(name),
            needs_mean_pooling=embedding.windowed,
            progress_unit="macro-windows" if embedding.windowed else "chunks",
            embedding=embedding,
        )
        for name, embedding in _embeddings().items()
    ]
