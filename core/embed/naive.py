"""Naive vectors: each chunk's text encoded on its own, exactly as the model's library would.

A text longer than the model's sequence limit is truncated the way sentence-transformers
truncates it (content cut to ``max_tokens`` minus the special tokens, from the
tokenizer's truncation side), and the cut is recorded in ``truncated_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.embed.encoder import Encoder
from core.embed.records import ChunkVector

Progress = Callable[[int, int], None]


def encode_alone(
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    counted_texts: Sequence[str],
    encoder: Encoder,
    *,
    method: str,
    progress: Progress | None = None,
) -> list[ChunkVector]:
    """Encode ``texts`` one per vector; ``token_count`` counts ``counted_texts``.

    ``counted_texts`` is the chunk text itself (for contextual encoding, ``texts`` carry a
    prefix that is not the chunk's own).
    """
    contents = encoder.content_ids(texts)
    counts = (
        [len(ids) for ids in contents]
        if counted_texts is texts
        else [len(ids) for ids in encoder.content_ids(counted_texts)]
    )
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


def naive_vectors(
    texts: Sequence[str],
    chunk_ids: Sequence[str],
    encoder: Encoder,
    *,
    progress: Progress | None = None,
    counted: Sequence[str] | None = None,
) -> list[ChunkVector]:
    """Naive vectors of what each chunk's encoder reads (same order as given);
    ``token_count`` counts ``counted`` (the chunk texts themselves) when given."""
    return encode_alone(
        chunk_ids, texts, texts if counted is None else counted, encoder, method="naive",
        progress=progress,
    )  # fmt: skip
