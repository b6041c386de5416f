"""Embed: the encoder and the functions that compute dense vectors for chunk spans.

The method registry composes them (``core.methods.dense``: each dense method's
``DenseEmbedding`` names its vector function and its cache variant;
``core.methods.embedding.embed_chunks`` is the call every stage makes). Chunk text, spans
and citations never differ between methods; only the vectors do. The naive and contextual
vectors are texts encoded alone, so they run on any ``TextEncoder``, an embeddings
server's included; late chunking pools token states, which only the local ``Encoder``
gives.

Modules:

- ``encoder``: one local Hugging Face model, its pooling mode and sequence limit;
- ``modelconfig``: what a model folder says about itself (pooling, limit, positions);
- ``http``: an OpenAI-compatible embeddings server as a ``TextEncoder``;
- ``naive``: each chunk's text encoded on its own;
- ``late``: the whole document through the model in macro-windows, each chunk pooled
  from its own tokens' states;
- ``token_spans``: character spans to token spans, and late chunking's macro-windows;
- ``contextual``: the chunk text prefixed with title and heading path, encoded alone;
- ``records``: what the stage produces: one vector per chunk, the macro-windows;
- ``cache``: the content-addressed vector cache;
- ``states``: late token states on disk, bounded, evicted oldest first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.embed.cache import CacheKey, VectorCache
from core.embed.contextual import contextual_text
from core.embed.encoder import DEFAULT_MODEL_NAME, POOLINGS, Encoder, load_encoder
from core.embed.late import WindowPolicy, late_windows, window_policy
from core.embed.naive import text_digest
from core.embed.records import ChunkVector, LateWindow
from core.protocols import TextEncoder

__all__ = [
    "DEFAULT_MODEL_NAME",
    "POOLINGS",
    "ChunkVector",
    "Encoder",
    "LateWindow",
    "VectorCache",
    "WindowPolicy",
    "contextual_text",
    "encode_queries",
    "late_windows",
    "load_encoder",
    "window_policy",
]

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
