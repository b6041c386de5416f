"""Naive vectors: each chunk's text encoded on its own, exactly as the model's library would.

A text longer than the model's sequence limit is truncated the way sentence-transformers
truncates it (content cut to ``max_tokens`` minus the special tokens, from the
tokenizer's truncation side), and the cut is recorded in ``truncated_tokens``.

An encoder that takes texts, not token ids (an embeddings server,
``core.embed.http.HttpEncoder``), encodes the texts itself: tokens are then counted with
the tokenizer of its ``model_dir``, and ``truncated_tokens`` is 0 since its cut is not
visible (:func:`encode_texts_alone`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.embed.encoder import Encoder
from core.embed.records import ChunkVector
from core.model.tokens import load_tokenizer
from core.protocols import TextEncoder
from core.provenance.types import Chunk, Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.embed.late import WindowPolicy
    from core.methods.spec import MethodSpec

Progress = Callable[[int, int], None]


def encode_alone(
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    counted_texts: Sequence[str],
    encoder: TextEncoder,
    *,
    method: str,
    progress: Progress | None = None,
) -> list[ChunkVector]:
    """Encode ``texts`` one per vector; ``token_count`` counts ``counted_texts``.

    ``counted_texts`` is the chunk text itself (for contextual encoding, ``texts`` carry a
    prefix that is not the chunk's own). An encoder other than the local ``Encoder`` goes
    through :func:`encode_texts_alone`.
    """
    if not isinstance(encoder, Encoder):
        return encode_texts_alone(
            chunk_ids, texts, counted_texts, encoder, method=method, progress=progress
        )
    contents = encoder.content_ids(texts)
    other = [i for i, (t, c) in enumerate(zip(texts, counted_texts, strict=True)) if t != c]
    counts = [len(ids) for ids in contents]  # a text read as it is counted: tokenised once
    for i, ids in zip(other, encoder.content_ids([counted_texts[i] for i in other]), strict=True):
        counts[i] = len(ids)
    vectors = encoder.encode_ids(contents, progress=progress)
    keep = encoder.content_tokens
    return [
        ChunkVector(
            chunk_id=cid,
            method=method,
            vector=vectors[i],
            token_count=counts[i],
            truncated_tokens=max(0, len(contents[i]) - keep),
        )
        for i, cid in enumerate(chunk_ids)
    ]


def encode_texts_alone(
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    counted_texts: Sequence[str],
    encoder: TextEncoder,
    *,
    method: str,
    progress: Progress | None = None,
) -> list[ChunkVector]:
    """Like :func:`encode_alone` for an encoder that takes texts (``encode_texts``), not
    token ids: ``token_count`` counts ``counted_texts`` with the tokenizer of
    ``encoder.model_dir`` (the one chunking counts with, which need not be the one the
    encoder uses), and ``truncated_tokens`` is 0 because such an encoder does not say
    what it cut."""
    tokenizer = load_tokenizer(encoder.model_dir)
    vectors = encoder.encode_texts(texts, progress=progress)
    return [
        ChunkVector(
            chunk_id=cid,
            method=method,
            vector=vectors[i],
            token_count=tokenizer.count(counted_texts[i]),
            truncated_tokens=0,
        )
        for i, cid in enumerate(chunk_ids)
    ]


def text_digest(text: str) -> str:
    """16 hex digits of ``text``'s blake2b: the part of a cache variant that names a text."""
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def header_variant(doc: Document, chunk: Chunk, policy: WindowPolicy | None) -> str:
    """``""``, or ``thp-<digest>`` of what the encoder reads when a split table's header
    rows come before the chunk (``Chunk.encoder_text``)."""
    return "" if chunk.encoder_text == chunk.text else "thp-" + text_digest(chunk.encoder_text)


def naive_vectors(
    spec: MethodSpec,
    doc: Document,
    chunks: Sequence[Chunk],
    encoder: TextEncoder,
    *,
    policy: WindowPolicy | None = None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """Naive vectors of what each chunk's encoder reads (same order as given);
    ``token_count`` counts the chunk's own text. No window policy, nothing cached on the
    way."""
    return encode_alone(
        [c.chunk_id for c in chunks], [c.encoder_text for c in chunks], [c.text for c in chunks],
        encoder, method=spec.name, progress=progress,
    )  # fmt: skip
