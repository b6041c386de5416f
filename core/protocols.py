"""The interfaces of what is swapped: the encoder, the store, and a method's records.

Each is a ``typing.Protocol``: structural, so the real implementation and a test's stand-in
need no common base, and ``mypy`` checks that both satisfy it (``tests/protocol_checks.py``
assigns each implementation to its Protocol; ``tests/test_typing.py`` runs mypy on it).

- ``TextEncoder``: what the engine asks of an encoder outside late chunking's own pooling
  (``core.embed.Encoder``; ``tests.fakes.FakeEncoder``). Vectors are float32 and
  L2-normalised, one row per text, ``dim`` columns. ``QueryEncoder`` is its part that
  ranking a query needs (the benchmark's stand-in of stored query vectors has only it).
- ``IndexListing`` / ``ChunkIndex``: the store's listing of stored document versions, and
  the reads and writes the indexer and retrieval make (``core.store.ChunkStore``, over an
  embedded folder or a Chroma server alike).
- ``RecordsFn``: the records of one stored method for one document's chunks
  (``core.index.indexer.method_records``, which runs the method's registered ``IndexStep``;
  ``tests.fakes.fake_embed_chunks``). One record per chunk, in the order given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.embed.records import ChunkVector
    from core.provenance.types import Chunk, ChunkPolicy, Document
    from core.store.chroma_records import ScopeRecords, StoredHit, UpsertReport
    from core.store.markers import IndexedDoc

Progress = Callable[[int, int], None]


class QueryEncoder(Protocol):
    """What ranking a query needs: the model's name (it picks the store collections) and
    the query's vector."""

    @property
    def name(self) -> str:
        """The model's name, as runs and store collections record it."""
        ...

    def encode_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised."""
        ...


class TextEncoder(QueryEncoder, Protocol):
    """An encoder: read-only facts about its model, and texts to unit vectors."""

    @property
    def model_dir(self) -> Path:
        """The local model folder (its tokenizer counts tokens for chunking)."""
        ...

    @property
    def pooling(self) -> str:
        """``mean`` or ``cls``: how one sequence's token states become its vector."""
        ...

    @property
    def max_tokens(self) -> int:
        """Tokens of one sequence, special tokens included (longer texts are truncated)."""
        ...

    @property
    def position_limit(self) -> int:
        """Positions the model has: the longest sequence a forward pass takes."""
        ...

    @property
    def dim(self) -> int:
        """Columns of every vector."""
        ...

    @property
    def device(self) -> str: ...

    @property
    def identity(self) -> str:
        """What makes two encoders give the same vectors (part of every cache key)."""
        ...

    def encode_texts(self, texts: Sequence[str], *, progress: Progress | None = None) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, L2-normalised, each text encoded alone;
        ``progress(done, total)`` in texts."""
        ...


class RecordsFn(Protocol):
    """One stored method's records for one document's chunks, in the chunks' order."""

    def __call__(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        method: str,
        encoder: TextEncoder,
        *,
        progress: Progress | None = None,
        cache: VectorCache | None = None,
    ) -> list[ChunkVector]: ...


class IndexListing(Protocol):
    """The stored document versions, one entry per (collection, document version)."""

    def indexed_documents(self) -> list[IndexedDoc]: ...


class ChunkIndex(IndexListing, Protocol):
    """A store of chunk records per (model, method, policy) collection.

    Writing a document version replaces its older records (upsert by stable chunk ids);
    a version is indexed only when all ``n_chunks`` records and its complete marker are
    stored. Scores of ``query`` are cosines."""

    def upsert_document(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        vectors: Sequence[ChunkVector],
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        progress: Progress | None = None,
    ) -> UpsertReport: ...

    def delete_document(self, doc_id: str) -> int:
        """Records removed (every collection)."""
        ...

    def is_version_indexed(
        self,
        doc_id: str,
        sha256: str,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        n_chunks: int | None = None,
    ) -> bool: ...

    def count(self, *, model: str, method: str, policy: ChunkPolicy) -> int: ...

    def query(
        self,
        vector: np.ndarray,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        k: int = 10,
        doc_id: str | None = None,
    ) -> list[StoredHit]: ...

    def scope_records(
        self,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        doc_id: str | None = None,
        ids: Sequence[str] | None = None,
    ) -> ScopeRecords: ...
