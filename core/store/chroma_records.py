"""One chunk and its vector as a Chroma record, and back.

A record is ``(id, embedding, metadata, document)`` with ``id == chunk_id`` and
``document == chunk.text``. Chroma metadata values are scalars and never ``None``, so
tuples are encoded as strings: ``pages`` and ``windows`` as comma-separated integers
(``""`` when empty), ``block_kinds`` comma-separated, ``heading_path`` as a JSON list
(headings may contain commas). Every provenance field of ``Chunk`` is kept, so a hit is a
checkable citation without reloading the document.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import StoreError
from core.provenance.cite import Citation
from core.provenance.serial import Fields
from core.provenance.types import Chunk, ChunkPolicy, Document

if TYPE_CHECKING:
    from core.embed import ChunkVector

SCHEMA_VERSION = 1
MetaValue = str | int | float | bool


def _ints_to_str(values: tuple[int, ...]) -> str:
    return ",".join(str(int(v)) for v in values)


@functools.lru_cache(maxsize=64)
def _policy_json(policy: ChunkPolicy) -> str:
    """The stored form of a policy (the same for every chunk of a batch, so cached)."""
    return json.dumps(policy.to_dict(), sort_keys=True)


def _str_to_ints(text: object) -> tuple[int, ...]:
    return tuple(int(p) for p in str(text).split(",") if p.strip())


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredHit:
    """A stored chunk ranked for a query under one method: ``rank`` 1-based, ``score``
    on that method's scale (``core.methods.get(method).score``: a cosine in [-1, 1], a
    BM25 score, a fused score).

    ``token_count``/``truncated_tokens`` count the model's tokens for this method's
    vector (``truncated_tokens > 0``: the vector never saw that many of the chunk's
    tokens); ``windows`` are the late-chunking macro-windows that gave the token states
    (empty for naive and contextual) and ``context`` says how much context they had.
    ``matched`` (lexical methods) are the document character spans of the words whose
    terms the query holds; ``part_ranks`` (fused methods) each part's rank of the chunk
    (None: beyond the depth that part was searched to).
    """

    chunk_id: str
    rank: int
    score: float
    method: str
    model: str
    policy_key: str
    doc_id: str
    doc_sha256: str
    doc_source: str
    doc_title: str
    char_start: int
    char_end: int
    pages: tuple[int, ...]
    heading_path: tuple[str, ...]
    block_kinds: tuple[str, ...]
    text: str
    chunk_index: int
    token_count: int
    truncated_tokens: int
    windows: tuple[int, ...]
    context: str
    full_context_tokens: int
    oversize: bool
    prefix: str = ""
    garbled: bool = False
    matched: tuple[tuple[int, int], ...] = ()
    part_ranks: tuple[tuple[str, int | None], ...] = ()
    start_s: float | None = None  # a transcript chunk's time range, seconds
    end_s: float | None = None

    @property
    def citation(self) -> Citation:
        return Citation.of_chunk(self)


def chunk_metadata(
    doc: Document,
    chunk: Chunk,
    vector: ChunkVector,
    *,
    chunk_index: int,
    model: str,
    method: str,
    policy: ChunkPolicy,
) -> dict[str, MetaValue]:
    """The metadata of one record; raises ``ValueError`` if chunk, vector and doc disagree."""
    if chunk.doc_id != doc.doc_id or chunk.doc_sha256 != doc.sha256:
        raise ValueError(f"chunk {chunk.chunk_id} is not from {doc.doc_id}@{doc.sha256[:12]}")
    if vector.chunk_id != chunk.chunk_id or vector.method != method:
        raise ValueError(f"vector {vector.chunk_id}/{vector.method} is not for {chunk.chunk_id}")
    if chunk.policy != policy:
        raise ValueError(f"chunk {chunk.chunk_id} was made by {chunk.policy.key}, not {policy.key}")
    meta: dict[str, MetaValue] = {
        "schema": SCHEMA_VERSION,
        "doc_id": doc.doc_id,
        "doc_sha256": doc.sha256,
        "doc_source": doc.source,
        "doc_title": doc.title,
        "doc_kind": doc.kind,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "pages": _ints_to_str(chunk.pages),
        "heading_path": (
            json.dumps(list(chunk.heading_path), ensure_ascii=False) if chunk.heading_path else "[]"
        ),
        "block_kinds": ",".join(chunk.block_kinds),
        "chunk_index": chunk_index,
        "chunk_token_count": chunk.token_count,
        "oversize": bool(chunk.oversize),
        "policy": policy.key,
        "policy_json": _policy_json(policy),
        "method": method,
        "model": model,
        "token_count": int(vector.token_count),
        "truncated_tokens": int(vector.truncated_tokens),
        "windows": _ints_to_str(tuple(vector.windows)),
        "context": str(vector.context),
        "full_context_tokens": int(vector.full_context_tokens),
        "prefix": str(vector.prefix),
        "garbled": bool(chunk.garbled),
    }
    if chunk.start_s is not None and chunk.end_s is not None:
        meta["start_s"], meta["end_s"] = float(chunk.start_s), float(chunk.end_s)
    for key, value in meta.items():
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(f"metadata {key} of {chunk.chunk_id} has no value")
    return meta


def hit_from_record(
    chunk_id: str, meta: Mapping[str, object], text: str, *, score: float, rank: int
) -> StoredHit:
    """Rebuild a hit from what Chroma returned; the stored text must fill the stored span
    (a malformed record is a ``RecordError`` naming the record and the field)."""
    fields = Fields(meta, f"record {chunk_id}")
    schema = fields.integer("schema", 1)
    if schema > SCHEMA_VERSION:
        raise StoreError(
            f"record {chunk_id} was written in store schema {schema}, newer than this "
            f"Chunkscope's ({SCHEMA_VERSION}): upgrade Chunkscope to read this store"
        )
    char_start, char_end = fields.integer("char_start"), fields.integer("char_end")
    if len(text) != char_end - char_start:
        raise ValueError(f"record {chunk_id}: stored text does not fill its span")
    kinds = fields.string("block_kinds", "")
    return StoredHit(
        chunk_id=chunk_id,
        rank=rank,
        score=float(score),
        method=fields.string("method"),
        model=fields.string("model"),
        policy_key=fields.string("policy"),
        doc_id=fields.string("doc_id"),
        doc_sha256=fields.string("doc_sha256"),
        doc_source=fields.string("doc_source", ""),
        doc_title=fields.string("doc_title", ""),
        char_start=char_start,
        char_end=char_end,
        pages=_str_to_ints(fields.string("pages", "")),
        heading_path=tuple(json.loads(fields.string("heading_path", "[]"))),
        block_kinds=tuple(k for k in kinds.split(",") if k),
        text=text,
        chunk_index=fields.integer("chunk_index", 0),
        token_count=fields.integer("token_count", 0),
        truncated_tokens=fields.integer("truncated_tokens", 0),
        windows=_str_to_ints(fields.string("windows", "")),
        context=fields.string("context", "none"),
        full_context_tokens=fields.integer("full_context_tokens", 0),
        oversize=fields.boolean("oversize", False),
        prefix=fields.string("prefix", ""),
        garbled=fields.boolean("garbled", False),
        start_s=fields.optional_number("start_s"),
        end_s=fields.optional_number("end_s"),
    )


def hits_from_query(result: Mapping[str, Any]) -> list[StoredHit]:
    """Hits, rank 1 first, from Chroma's result for one query vector (``include``
    metadatas, documents and distances; cosine = 1 - distance)."""
    rows = zip(
        result["ids"][0],
        result["metadatas"][0],
        result["documents"][0],
        result["distances"][0],
        strict=True,
    )
    return [
        hit_from_record(cid, meta, text, score=1.0 - float(dist), rank=i)
        for i, (cid, meta, text, dist) in enumerate(rows, start=1)
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordBatch:
    """One document version's checked records in chunk order: ``ids[i]`` is stored with
    ``matrix[i]`` (float32, shape (n, dim)), ``metas[i]`` and ``texts[i]``."""

    ids: list[str]
    matrix: np.ndarray
    metas: list[dict[str, MetaValue]]
    texts: list[str]

    @classmethod
    def of(
        cls,
        doc: Document,
        chunks: Sequence[Chunk],
        vectors: Sequence[ChunkVector],
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
    ) -> RecordBatch:
        """Checked records; ``ValueError`` on a count mismatch, a duplicate chunk id,
        a chunk or vector of something else, or vectors that are not one finite matrix."""
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate chunk ids in {doc.doc_id}")
        metas = [
            chunk_metadata(doc, c, v, chunk_index=i, model=model, method=method, policy=policy)
            for i, (c, v) in enumerate(zip(chunks, vectors, strict=True))
        ]
        matrix = np.asarray([np.asarray(v.vector, dtype=np.float32) for v in vectors])
        if len(ids) and (matrix.ndim != 2 or not np.isfinite(matrix).all()):
            raise ValueError(f"vectors of {doc.doc_id} are not one finite matrix")
        return cls(ids=ids, matrix=matrix, metas=metas, texts=[c.text for c in chunks])


@dataclass(frozen=True, slots=True, kw_only=True)
class UpsertReport:
    collection: str
    doc_id: str
    upserted: int
    batches: int
    deleted_other_sha: int
    deleted_leftover: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeRecords:
    """All records of a scope in chunk order (doc_id, then position in the document)."""

    ids: tuple[str, ...]
    matrix: np.ndarray  # (n, dim) float32, as stored
    metadatas: tuple[dict[str, Any], ...]
    texts: tuple[str, ...]

    def hit(self, row: int, *, score: float, rank: int) -> StoredHit:
        return hit_from_record(
            self.ids[row], self.metadatas[row], self.texts[row], score=score, rank=rank
        )
