"""Late-chunking context of stored chunks, decoded from their store records.

``ChunkContext`` is a chunk's span and how much of its late-chunking context it had
(``full``, ``partial`` or ``none``, written by the late index step as record metadata);
``chunk_contexts`` reads it from ``ChunkStore.scope_records``' ids, metadata and texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.embed.records import CONTEXT_LEVELS
from core.provenance.serial import Fields


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkContext:
    """A chunk's span and its late-chunking context: ``level`` is full, partial or none
    (none: the chunk has no late vector, e.g. late is not indexed or the model is CLS)."""

    chunk_id: str
    label: str
    char_start: int
    char_end: int
    level: str
    token_count: int = 0
    full_context_tokens: int = 0

    def __post_init__(self) -> None:
        if self.level not in CONTEXT_LEVELS:
            raise ValueError(f"unknown context level {self.level!r}")


def chunk_contexts(
    ids: Sequence[str],
    metadatas: Sequence[Mapping[str, object]],
    texts: Sequence[str],
    *,
    late: bool,
) -> list[ChunkContext]:
    """Stored records (``ChunkStore.scope_records``) as ``ChunkContext``; records of another
    method than late (``late=False``) have no late context: level ``none``."""
    out = []
    for chunk_id, meta, text in zip(ids, metadatas, texts, strict=True):
        fields = Fields(meta, f"record {chunk_id}")
        out.append(
            ChunkContext(
                chunk_id=chunk_id,
                label=" ".join(text.split()[:8]),
                char_start=fields.integer("char_start"),
                char_end=fields.integer("char_end"),
                level=fields.string("context", "none") if late else "none",
                token_count=fields.integer("token_count", 0),
                full_context_tokens=fields.integer("full_context_tokens", 0),
            )
        )
    return out


def context_counts(chunks: Sequence[ChunkContext]) -> dict[str, int]:
    """Chunks per context level, every level present."""
    return {level: sum(c.level == level for c in chunks) for level in CONTEXT_LEVELS}
