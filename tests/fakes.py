"""Deterministic stand-ins for the encoder and the embed stage, for fast unit tests.

``FakeEncoder`` hashes character trigrams of the lower-cased text into a fixed-size
vector (L2-normalised), so similar texts get similar vectors and every run gives the same
numbers. ``fake_embed_chunks`` follows the contract of ``core.methods.embedding.embed_chunks``:
``naive`` encodes the chunk alone, ``contextual`` prefixes title and heading path,
``late`` mixes the chunk's vector with its document's (so it differs from naive and has
"seen" the whole document).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.embed.cache import VectorCache
from core.embed.records import ChunkVector
from core.model.paths import default_model_dir
from core.protocols import TextEncoder
from core.provenance.types import Chunk, ChunkPolicy, Document, make_chunk_id

FAKE_DIM = 64
FAKE_METHODS = ("naive", "late", "contextual")


def trigram_vector(text: str, dim: int = FAKE_DIM) -> np.ndarray:
    """Normalised bag of hashed character trigrams; the zero text maps to ``e_0``."""
    vec = np.zeros(dim, dtype=np.float32)
    padded = f"  {text.lower()}  "
    for i in range(len(padded) - 2):
        digest = hashlib.blake2b(padded[i : i + 3].encode(), digest_size=4).digest()
        vec[int.from_bytes(digest, "little") % dim] += 1.0
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return vec / norm


class FakeEncoder:
    """A ``core.protocols.TextEncoder`` (mypy checks it, ``tests/protocol_checks.py``);
    counts the texts it encoded."""

    def __init__(self, name: str = "fake-trigram", dim: int = FAKE_DIM, pooling: str = "mean"):
        self.name = name
        self.model_dir = default_model_dir()  # its tokenizer counts tokens for chunking
        self.pooling = pooling
        self.max_tokens = 256
        self.position_limit = 512
        self.dim = dim
        self.device = "cpu"
        self.encoded = 0

    @property
    def identity(self) -> str:
        return f"{self.name}|{self.dim}"

    def encode_texts(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = trigram_vector(text, self.dim)
            if progress is not None:
                progress(i + 1, len(texts))
        self.encoded += len(texts)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_texts([text])[0]


def _normalise(vec: np.ndarray) -> np.ndarray:
    return (vec / np.linalg.norm(vec)).astype(np.float32)


def fake_embed_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str,
    encoder: TextEncoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """Same signature and record shape as ``core.index.indexer.method_records``: the dense methods
    faked, any other registered method (lexical, or one a test registers) made by its own
    index step."""
    if method not in FAKE_METHODS:
        from core.index.indexer import method_records

        return method_records(doc, chunks, method, encoder, progress=progress, cache=cache)
    if method == "contextual":
        texts = [" > ".join((doc.title, *c.heading_path)) + "\n\n" + c.text for c in chunks]
    else:
        texts = [c.text for c in chunks]
    matrix = encoder.encode_texts(texts, progress=progress)
    doc_vec = trigram_vector(doc.text, encoder.dim)
    out = []
    for chunk, row in zip(chunks, matrix, strict=True):
        n_tokens = max(1, len(chunk.text.split()))
        if method == "late":
            out.append(
                ChunkVector(
                    chunk_id=chunk.chunk_id,
                    method=method,
                    vector=_normalise(row + doc_vec),
                    token_count=n_tokens,
                    windows=(0,),
                    context="full",
                    full_context_tokens=n_tokens,
                )
            )
        else:
            truncated = max(0, n_tokens - encoder.max_tokens)
            out.append(
                ChunkVector(
                    chunk_id=chunk.chunk_id,
                    method=method,
                    vector=row,
                    token_count=n_tokens,
                    truncated_tokens=truncated,
                )
            )
    return out


def make_document(
    doc_id: str, text: str, *, title: str | None = None, source: str | None = None
) -> Document:
    """A reflowable document whose sha256 is that of its UTF-8 text."""
    return Document(
        doc_id=doc_id,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        source=source or f"{doc_id}.txt",
        kind="text",
        text=text,
        title=title or doc_id,
    )


def paragraph_chunks(doc: Document, policy: ChunkPolicy) -> list[Chunk]:
    """One chunk per blank-line-separated paragraph (exact spans, no search in copies)."""
    chunks: list[Chunk] = []
    start = 0
    text = doc.text
    while start < len(text):
        end = text.find("\n\n", start)
        end = len(text) if end < 0 else end
        if end > start:
            chunks.append(
                Chunk(
                    chunk_id=make_chunk_id(doc.doc_id, doc.sha256, policy, start, end),
                    doc_id=doc.doc_id,
                    doc_sha256=doc.sha256,
                    char_start=start,
                    char_end=end,
                    text=text[start:end],
                    pages=(),
                    heading_path=("Section", f"Part {len(chunks) + 1}"),
                    block_kinds=("paragraph",),
                    token_count=len(text[start:end].split()),
                    policy=policy,
                )
            )
        start = end + 2
    return chunks


def index_by_paragraphs(
    docs: Sequence[Document], *, policy: ChunkPolicy, encoder: TextEncoder, store: Any,
    methods: Sequence[str] = ("naive", "late", "bm25"),
) -> None:  # fmt: skip
    """Index ``docs`` into ``store`` with one chunk per paragraph and the fake vectors (no
    parse, no model): the small stores the ranking tests read."""
    import core.index.indexer as index_module
    from core.index.indexer import default_steps, index_documents

    original = index_module._chunk
    index_module._chunk = lambda doc, blocks, policy, encoder: paragraph_chunks(doc, policy)
    try:
        index_documents(
            list(docs), policy=policy, methods=list(methods), encoder=encoder, store=store,
            steps=default_steps(fake_embed_chunks),
        )  # fmt: skip
    finally:
        index_module._chunk = original
