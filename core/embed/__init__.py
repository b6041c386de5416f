"""Embed: the vectors of the registry's dense methods, for the same chunk spans.

Each method's spec carries its ``DenseEmbedding`` (``core.methods.dense``): the function
that computes its vectors and the rule of its cache variant. The built-in ones:

- ``naive``: each chunk's text alone (``naive.py``);
- ``late``: the whole document through the model in macro-windows, each chunk pooled from
  its own tokens' states (``late.py``, ``spans.py``);
- ``contextual``: the chunk text prefixed with title and heading path, alone
  (``contextual.py``).

Chunk text, spans and citations never differ between methods; only the vectors do.

The naive and contextual vectors are texts encoded alone (``encodes_texts_alone``), so
they run on any ``TextEncoder``, an embeddings server's (``core.embed.http``) included;
late chunking pools token states, which only the local ``Encoder`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core import methods
from core.embed.cache import CacheKey, VectorCache
from core.embed.contextual import contextual_text, contextual_vectors
from core.embed.encoder import DEFAULT_MODEL_NAME, POOLINGS, Encoder, load_encoder
from core.embed.late import (
    WindowPolicy,
    check_late_pooling,
    document_tokens,
    late_windows,
    window_policy,
)
from core.embed.naive import naive_vectors, text_digest
from core.embed.records import ChunkVector, LateWindow
from core.errors import ModelError
from core.methods import DenseEmbedding, MethodSpec
from core.protocols import TextEncoder
from core.types import Chunk, Document

__all__ = [
    "DEFAULT_MODEL_NAME",
    "POOLINGS",
    "ChunkVector",
    "Encoder",
    "LateWindow",
    "VectorCache",
    "WindowPolicy",
    "contextual_text",
    "embed_chunks",
    "embedding_of",
    "encode_queries",
    "uncached_chunks",
    "encodes_texts_alone",
    "late_windows",
    "load_encoder",
    "window_policy",
]

Progress = Callable[[int, int], None]
# Computes one method's vectors of some chunks: (doc, chunks, policy, progress, cache).
ChunkVectors = Callable[
    [Document, Sequence[Chunk], WindowPolicy | None, Progress | None, VectorCache | None],
    list[ChunkVector],
]
# The vector functions that read whole texts through ``encode_texts`` and nothing else of
# the encoder (no token ids, no token states): they take any ``TextEncoder``.
_TEXTS_ALONE: tuple[Callable[..., list[ChunkVector]], ...] = (naive_vectors, contextual_vectors)


def encodes_texts_alone(method: str | MethodSpec) -> bool:
    """True when a dense method's vectors are texts encoded alone, so an encoder that
    returns one vector per text (an embeddings server) can make them; False for late
    chunking (token states) and for any embedding not known to need texts only."""
    spec = method if isinstance(method, MethodSpec) else methods.get(method)
    return spec.embedding is not None and any(spec.embedding.vectors is f for f in _TEXTS_ALONE)


def embedding_of(method: str | MethodSpec) -> tuple[MethodSpec, DenseEmbedding]:
    """The spec of a method ``embed_chunks`` encodes, and its embedding; ``ValueError``
    for a name that is not one (unknown, lexical, fused, or a dense method without an
    embedding)."""
    if isinstance(method, MethodSpec):
        spec: MethodSpec | None = method
    else:
        try:
            spec = methods.get(method)
        except methods.UnknownMethodError:
            spec = None
    if spec is None or spec.embedding is None:
        name = method.name if isinstance(method, MethodSpec) else method
        known = ", ".join(methods.embedding_methods())
        raise ValueError(f"unknown method {name!r}: use one of {known}")
    return spec, spec.embedding


def _check_chunks(doc: Document, chunks: Sequence[Chunk]) -> None:
    for chunk in chunks:
        if chunk.doc_sha256 != doc.sha256 or doc.text[chunk.char_start : chunk.char_end] != (
            chunk.text
        ):
            raise ValueError(f"chunk {chunk.chunk_id} is not a span of document {doc.doc_id}")


def _cache_keys(
    doc: Document,
    chunks: Sequence[Chunk],
    spec: MethodSpec,
    encoder: TextEncoder,
    policy: WindowPolicy | None,
) -> list[CacheKey]:
    """Keys by what decides a vector: the model, the method, the span and the method's
    variant (its window policy, prefix or a table's header rows; ``DenseEmbedding.variant``)."""
    _, embedding = embedding_of(spec)
    return [
        CacheKey(
            model=encoder.identity,
            method=spec.name,
            doc_sha256=doc.sha256,
            char_start=c.char_start,
            char_end=c.char_end,
            variant=embedding.variant(doc, c, policy),
            max_tokens=encoder.max_tokens,
        )
        for c in chunks
    ]


def uncached_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str | MethodSpec,
    encoder: TextEncoder,
    cache: VectorCache | None,
) -> tuple[list[Chunk], WindowPolicy | None]:
    """The chunks whose vectors ``embed_chunks`` would compute (all without a cache), and
    the window policy it would use: what a cost estimate counts before a run. Reads no
    vector and counts no cache hit."""
    spec, embedding = embedding_of(method)
    policy = None
    if isinstance(encoder, Encoder) and embedding.windowed:
        policy = window_policy(encoder, doc_tokens=len(document_tokens(encoder, doc)))
    if cache is None or (embedding.windowed and policy is None):
        return list(chunks), policy  # a windowed method off a local model is never cached
    keys = _cache_keys(doc, chunks, spec, encoder, policy)
    return [c for k, c in zip(keys, chunks, strict=True) if not cache.holds(k)], policy


def embed_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str | MethodSpec,
    encoder: TextEncoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """One :class:`ChunkVector` per chunk, in the order given.

    ``method`` is a registered method with an embedding
    (``core.methods.embedding_methods()``), by name or spec.
    A method whose vectors are texts encoded alone (``encodes_texts_alone``) takes any
    ``TextEncoder``; any other needs a ``core.embed.Encoder`` (late chunking reads its
    token states), and another encoder is a ``ModelError`` that says why.

    ``window_tokens``/``stride_tokens`` size a windowed method's macro-windows in content
    tokens (defaults: ``late.default_window``/``late.default_stride``); other methods
    ignore them. ``progress(done, total)`` counts chunks (naive, contextual) or windows
    (late). With a ``cache``, only spans it has not seen are encoded.
    """
    spec, embedding = embedding_of(method)
    compute = _vector_function(spec, embedding, encoder)
    _check_chunks(doc, chunks)
    policy = None
    if isinstance(encoder, Encoder):
        if spec.needs_mean_pooling:
            check_late_pooling(encoder)
        if embedding.windowed:
            policy = window_policy(
                encoder,
                window_tokens=window_tokens,
                stride_tokens=stride_tokens,
                doc_tokens=len(document_tokens(encoder, doc)),
            )
    if not chunks:
        return []
    if cache is None:
        return compute(doc, chunks, policy, progress, None)
    keys = _cache_keys(doc, chunks, spec, encoder, policy)
    found = [cache.get(k, c.chunk_id) for k, c in zip(keys, chunks, strict=True)]
    missing = [i for i, record in enumerate(found) if record is None]
    if missing:
        fresh = compute(doc, [chunks[i] for i in missing], policy, progress, cache)
        for i, record in zip(missing, fresh, strict=True):
            cache.put(keys[i], record)
            found[i] = record
    elif progress is not None:
        progress(len(chunks), len(chunks))
    return [record for record in found if record is not None]


QUERY_METHOD = "query"  # the cache's method name of a query text encoded alone


def encode_queries(
    encoder: TextEncoder, texts: Sequence[str], cache: VectorCache | None = None
) -> np.ndarray:
    """``(len(texts), dim)`` float32 query vectors, each text encoded alone; with a
    ``cache`` a query already encoded by this model is read back, not encoded again (the
    key names the text by its digest in place of a document)."""
    if cache is None:
        return np.asarray(encoder.encode_texts(list(texts)), dtype=np.float32)
    keys = [
        CacheKey(
            model=encoder.identity, method=QUERY_METHOD, doc_sha256=text_digest(t),
            char_start=0, char_end=len(t), variant="", max_tokens=encoder.max_tokens,
        )
        for t in texts
    ]  # fmt: skip
    found = [cache.get(k, QUERY_METHOD) for k in keys]
    missing = [i for i, record in enumerate(found) if record is None]
    if missing:
        fresh = np.asarray(encoder.encode_texts([texts[i] for i in missing]), dtype=np.float32)
        for row, i in enumerate(missing):
            made = ChunkVector(
                chunk_id=QUERY_METHOD, method=QUERY_METHOD, vector=fresh[row], token_count=0
            )
            cache.put(keys[i], made)
            found[i] = made
    out = np.zeros((len(texts), encoder.dim), dtype=np.float32)
    for i, kept in enumerate(found):
        assert kept is not None
        out[i] = kept.vector
    return out


def _vector_function(
    spec: MethodSpec, embedding: DenseEmbedding, encoder: TextEncoder
) -> ChunkVectors:
    """``embedding.vectors`` bound to ``spec`` and ``encoder``; ``ModelError`` when the
    encoder is not a local ``Encoder`` and the method needs more than texts encoded alone."""
    if isinstance(encoder, Encoder):
        local = encoder

        def on_local(
            doc: Document,
            chunks: Sequence[Chunk],
            policy: WindowPolicy | None,
            progress: Progress | None,
            cache: VectorCache | None,
        ) -> list[ChunkVector]:
            return embedding.vectors(
                spec, doc, chunks, local, policy=policy, progress=progress, cache=cache
            )

        return on_local
    found = next((f for f in _TEXTS_ALONE if embedding.vectors is f), None)
    if found is None:
        needs = (
            "pools the token states of a whole document"
            if embedding.windowed or spec.needs_mean_pooling
            else "encodes token ids"
        )
        raise ModelError(
            f"the {spec.name} method {needs}, and {encoder.name} gives only one vector per "
            "text: use a local model (load_encoder, --model) for it"
        )
    texts_alone = found

    def on_texts(
        doc: Document,
        chunks: Sequence[Chunk],
        policy: WindowPolicy | None,
        progress: Progress | None,
        cache: VectorCache | None,
    ) -> list[ChunkVector]:
        return texts_alone(
            spec, doc, chunks, encoder, policy=policy, progress=progress, cache=cache
        )

    return on_texts
