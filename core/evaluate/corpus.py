"""An evaluation's corpus: every document's chunks stacked in ranking order (documents by
``doc_id``, chunks by offset), with each chunk's document and whether its citation
verifies, so rankings never depend on the order documents were given in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import LabelError
from core.provenance.cite import Citation, CitationStatus
from core.provenance.types import Chunk, Document

ChunkFn = Callable[[Document], Sequence[Chunk]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Corpus:
    """Chunks of all documents stacked in ranking order, with per-chunk facts."""

    docs: dict[str, Document]
    chunks_by_doc: list[tuple[Document, list[Chunk]]]
    chunks: list[Chunk]
    doc_index: np.ndarray  # (n_chunks,) index of each chunk's document in chunks_by_doc
    valid: np.ndarray  # (n_chunks,) citation verifies against the loaded document

    def rows(self, doc_id: str | None) -> tuple[int, int]:
        """``[lo, hi)``: the rows of one document's chunks (stacked together), or all."""
        if doc_id is None:
            return 0, len(self.chunks)
        start = 0
        for doc, chunks in self.chunks_by_doc:
            if doc.doc_id == doc_id:
                return start, start + len(chunks)
            start += len(chunks)
        raise ValueError(f"the corpus holds no document {doc_id!r}")


def build_corpus(docs: Sequence[Document], chunker: ChunkFn) -> Corpus:
    by_id: dict[str, Document] = {}
    for doc in docs:
        if doc.doc_id in by_id:
            raise LabelError(f"two documents share the id {doc.doc_id!r}: rename one file")
        by_id[doc.doc_id] = doc
    chunks_by_doc = [(by_id[i], list(chunker(by_id[i]))) for i in sorted(by_id)]
    for _, chunks in chunks_by_doc:
        chunks.sort(key=lambda c: (c.char_start, c.char_end))
    flat = [c for _, chunks in chunks_by_doc for c in chunks]
    doc_index = np.array(
        [i for i, (_, chunks) in enumerate(chunks_by_doc) for _ in chunks], dtype=np.int64
    )
    valid = np.array(
        [Citation.of_chunk(c).verify(by_id.get(c.doc_id)) is CitationStatus.OK for c in flat],
        dtype=bool,
    )
    return Corpus(
        docs=by_id, chunks_by_doc=chunks_by_doc, chunks=flat, doc_index=doc_index, valid=valid
    )
