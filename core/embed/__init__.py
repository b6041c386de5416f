"""Embed: three vectors for the same chunk spans.

- ``naive``: each chunk's text alone (``naive.py``);
- ``late``: the whole document through the model in macro-windows, each chunk pooled from
  its own tokens' states (``late.py``, ``spans.py``);
- ``contextual``: the chunk text prefixed with title and heading path, alone
  (``contextual.py``).

Chunk text, spans and citations never differ between methods; only the vectors do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from core.embed.cache import CacheKey, VectorCache
from core.embed.contextual import contextual_prefix, contextual_text, contextual_vectors
from core.embed.encoder import DEFAULT_MODEL_NAME, POOLINGS, Encoder, load_encoder
from core.embed.late import (
    WindowPolicy,
    check_late_pooling,
    document_tokens,
    late_vectors,
    late_windows,
    window_policy,
)
from core.embed.naive import naive_vectors
from core.embed.records import ChunkVector, LateWindow
from core.errors import ModelError
from core.protocols import TextEncoder
from core.types import Chunk, Document

__all__ = [
    "DEFAULT_MODEL_NAME",
    "METHODS",
    "POOLINGS",
    "ChunkVector",
    "Encoder",
    "LateWindow",
    "VectorCache",
    "WindowPolicy",
    "contextual_text",
    "embed_chunks",
    "late_windows",
    "load_encoder",
    "window_policy",
]

METHODS: tuple[str, ...] = ("naive", "late", "contextual")
Progress = Callable[[int, int], None]


def _check_chunks(doc: Document, chunks: Sequence[Chunk]) -> None:
    for chunk in chunks:
        if chunk.doc_sha256 != doc.sha256 or doc.text[chunk.char_start : chunk.char_end] != (
            chunk.text
        ):
            raise ValueError(f"chunk {chunk.chunk_id} is not a span of document {doc.doc_id}")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _variant(method: str, doc: Document, chunk: Chunk, policy: WindowPolicy | None) -> str:
    """What besides the span decides the vector: the window policy (late), the prefix
    (contextual), a table's header rows read before the chunk (``Chunk.encoder_text``)."""
    if method == "late" and policy is not None:
        return policy.key
    header = "" if chunk.encoder_text == chunk.text else "thp-" + _digest(chunk.encoder_text)
    if method == "contextual":
        return "ctx-" + _digest(contextual_prefix(doc, chunk)) + header
    return header


def _cache_keys(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str,
    encoder: Encoder,
    policy: WindowPolicy | None,
) -> list[CacheKey]:
    return [
        CacheKey(
            model=encoder.identity,
            method=method,
            doc_sha256=doc.sha256,
            char_start=c.char_start,
            char_end=c.char_end,
            variant=_variant(method, doc, c, policy),
            max_tokens=encoder.max_tokens,
        )
        for c in chunks
    ]


def _compute(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str,
    encoder: Encoder,
    policy: WindowPolicy | None,
    progress: Progress | None,
    cache: VectorCache | None,
) -> list[ChunkVector]:
    if method == "naive":
        return naive_vectors(
            [c.encoder_text for c in chunks],
            [c.chunk_id for c in chunks],
            encoder,
            progress=progress,
            counted=[c.text for c in chunks],
        )
    if method == "contextual":
        return contextual_vectors(doc, chunks, encoder, progress=progress)
    assert policy is not None
    shape = (len(document_tokens(encoder, doc)), encoder.dim)
    # ``is not None``: an empty VectorCache is falsy (it has a length), yet may hold states.
    states = (
        None
        if cache is None
        else cache.get_states(encoder.identity, doc.sha256, policy.key, shape=shape)
    )
    records, kept = late_vectors(
        doc,
        chunks,
        encoder,
        policy,
        progress=progress,
        states=states,
        keep_states=cache is not None and states is None,
    )
    if cache is not None and kept is not None:
        cache.put_states(encoder.identity, doc.sha256, policy.key, kept)
    return records


def embed_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str,
    encoder: TextEncoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """One :class:`ChunkVector` per chunk, in the order given.

    The encoder must be a ``core.embed.Encoder``: every method reads its tokenizer, late
    chunking its token states too (another ``TextEncoder`` is a ``ModelError``).

    ``window_tokens``/``stride_tokens`` size late chunking's macro-windows in content
    tokens (defaults: ``late.default_window``/``late.default_stride``); other methods
    ignore them. ``progress(done, total)`` counts chunks (naive, contextual) or windows
    (late). With a ``cache``, only spans it has not seen are encoded.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: use one of {', '.join(METHODS)}")
    if not isinstance(encoder, Encoder):
        raise ModelError(
            f"the {method} method encodes with a transformers model, and "
            f"{type(encoder).__name__} is not one: load one with load_encoder"
        )
    _check_chunks(doc, chunks)
    policy = None
    if method == "late":
        check_late_pooling(encoder)
        policy = window_policy(
            encoder,
            window_tokens=window_tokens,
            stride_tokens=stride_tokens,
            doc_tokens=len(document_tokens(encoder, doc)),
        )
    if not chunks:
        return []
    if cache is None:
        return _compute(doc, chunks, method, encoder, policy, progress, None)
    keys = _cache_keys(doc, chunks, method, encoder, policy)
    found = [cache.get(k, c.chunk_id) for k, c in zip(keys, chunks, strict=True)]
    missing = [i for i, record in enumerate(found) if record is None]
    if missing:
        fresh = _compute(
            doc, [chunks[i] for i in missing], method, encoder, policy, progress, cache
        )
        for i, record in zip(missing, fresh, strict=True):
            cache.put(keys[i], record)
            found[i] = record
    elif progress is not None:
        progress(len(chunks), len(chunks))
    return [record for record in found if record is not None]
