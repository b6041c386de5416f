"""Read by mypy, never run: each implementation of a swapped part, real and fake, is
assigned to its Protocol (``core.protocols``, ``core.methods.spec.IndexStep``,
``core.retrieve.ranking.Ranker``), so a
signature or attribute that drifts from the Protocol fails ``tests/test_typing.py``."""

from __future__ import annotations

from core.embed.encoder import Encoder
from core.embed.http import HttpEncoder
from core.index.indexer import method_records
from core.methods.dense import embed_step
from core.methods.lexical import lexical_step
from core.methods.spec import IndexStep
from core.protocols import ChunkIndex, IndexListing, QueryEncoder, RecordsFn, TextEncoder
from core.retrieve.ranking import MemoryRanker, Ranker, StoreRanker
from core.store import ChunkStore
from tests.fakes import FakeEncoder, fake_embed_chunks


def encoders(real: Encoder, remote: HttpEncoder) -> list[TextEncoder]:
    """The model encoder, an embeddings server's and the test fake are all encoders."""
    return [real, remote, FakeEncoder()]


def query_encoders(real: Encoder, remote: HttpEncoder) -> list[QueryEncoder]:
    return [real, remote, FakeEncoder()]


def stores(real: ChunkStore) -> tuple[ChunkIndex, IndexListing]:
    """The Chroma store (embedded or server) is a chunk index and a listing."""
    return real, real


def rankers(in_store: StoreRanker, in_memory: MemoryRanker) -> list[Ranker]:
    """The store's backend and the in-memory one rank through one interface."""
    return [in_store, in_memory]


RECORDS: list[RecordsFn] = [method_records, fake_embed_chunks]
INDEX_STEPS: list[IndexStep] = [embed_step("naive"), lexical_step("bm25", contextual=False)]
