"""Bring your own chunks: chunks a pipeline already made, anchored in our canonical text.

``import_chunks`` ties the modules together: each chunk's document is the one its source
names among the documents given (by ``doc_id``, file name or file name without suffix; a
path's folders are ignored); a chunk whose source names none of them is reported with
that reason, never guessed. With one document and no source on any chunk, the chunks are
that document's.

Modules:

- ``shapes``: LangChain Documents, LlamaIndex TextNodes, plain rows, Chroma collections
  read as ``ForeignChunk`` records;
- ``anchor``: each chunk's span in the canonical text (``exact``, ``aligned``,
  ``ambiguous``, ``missing``) and the verdict on the offsets it claimed (``ok``,
  ``wrong``, ``absent``, ``unchecked``);
- ``chunkset``: the anchored set kept under its name beside the index and offered as a
  policy whose boundaries are the imported ones;
- ``live``: the user's own splitter (LangChain, LlamaIndex, chonkie, a factory) as a live
  policy, its pieces anchored like imported chunks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from core.imported.anchor import CLAIMS, DEFAULT_THRESHOLD, Anchor, anchor_document
from core.imported.chunkset import (
    ChunkSet,
    ImportedChunk,
    check_name,
    chunk_sets,
    now,
    register_chunk_sets,
    save_chunk_set,
    sets_folder,
)
from core.imported.live import register_resolvers
from core.imported.shapes import SHAPES, ForeignChunk, ImportChunksError, read_chroma, read_file
from core.provenance.types import Document

__all__ = [
    "CLAIMS",
    "DEFAULT_THRESHOLD",
    "SHAPES",
    "Anchor",
    "ChunkSet",
    "ForeignChunk",
    "ImportChunksError",
    "ImportedChunk",
    "Timing",
    "check_name",
    "chunk_sets",
    "import_chunks",
    "read_chroma",
    "read_file",
    "register_chunk_sets",
    "report_dict",
    "save_chunk_set",
    "sets_folder",
]

register_resolvers()  # langchain:, llamaindex:, chonkie:, py: names resolve


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Seconds spent anchoring, and the chunks anchored in that time."""

    anchor_s: float
    chunks: int


def _names(source: str) -> list[str]:
    """The names a source may match: itself, its file name, its stem (URI and Windows
    paths included)."""
    text = source.removeprefix("file://")
    names = [text]
    for pure in (PurePosixPath(text), PureWindowsPath(text)):
        names += [pure.name, pure.stem]
    return [n for n in dict.fromkeys(names) if n]


def _doc_finder(docs: Sequence[Document]) -> dict[str, list[Document]]:
    by_name: dict[str, list[Document]] = {}
    for doc in docs:
        source = PurePath(doc.source)
        for name in {doc.doc_id, source.name, source.stem}:
            if name and doc not in by_name.setdefault(name, []):
                by_name[name].append(doc)
    return by_name


def _which(
    chunk: ForeignChunk, by_name: dict[str, list[Document]], docs: Sequence[Document]
) -> Document | str:
    """The chunk's document, or why there is none (one line)."""
    if chunk.source is None:
        if len(docs) == 1:
            return docs[0]
        return "it names no document (no source) and several documents were given"
    for name in _names(chunk.source):
        found = by_name.get(name, [])
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            ids = ", ".join(sorted(d.doc_id for d in found))
            return f"its source {chunk.source!r} names several documents ({ids})"
    return f"its source {chunk.source!r} is none of the documents given"


def _unplaced(chunk: ForeignChunk, why: str) -> Anchor:
    return Anchor(
        index=chunk.index,
        doc_id=None,
        doc_sha256=None,
        anchor="missing",
        char_start=None,
        char_end=None,
        coverage=None,
        pages=(),
        claim="absent" if chunk.claimed_start is None else "unchecked",
        claimed_start=chunk.claimed_start,
        places=0,
        detail=why,
    )


def import_chunks(
    chunks: Sequence[ForeignChunk],
    docs: Sequence[Document],
    *,
    name: str,
    shape: str,
    origin: str,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[ChunkSet, Timing]:
    """Anchor ``chunks`` in ``docs`` and audit their claims; the set is not saved here."""
    check_name(name)
    if not 0 < threshold <= 1:
        raise ImportChunksError(f"--threshold is a share in (0, 1], got {threshold}")
    by_name = _doc_finder(docs)
    per_doc: dict[str, list[ForeignChunk]] = {}
    anchors: dict[int, Anchor] = {}
    doc_of: dict[str, Document] = {}
    for chunk in chunks:
        found = _which(chunk, by_name, docs)
        if isinstance(found, str):
            anchors[chunk.index] = _unplaced(chunk, found)
        else:
            per_doc.setdefault(found.doc_id, []).append(chunk)
            doc_of[found.doc_id] = found
    started = time.perf_counter()
    for doc_id, own in per_doc.items():
        for anchor in anchor_document(doc_of[doc_id], own, threshold=threshold):
            anchors[anchor.index] = anchor
    elapsed = time.perf_counter() - started
    kept = tuple(ImportedChunk(given=c, anchor=anchors[c.index]) for c in chunks)
    chunk_set = ChunkSet(
        name=name,
        shape=shape,
        origin=origin,
        created_at=now(),
        threshold=threshold,
        docs={doc_id: doc.sha256 for doc_id, doc in doc_of.items()},
        chunks=kept,
    )
    return chunk_set, Timing(anchor_s=elapsed, chunks=sum(map(len, per_doc.values())))


def report_dict(chunk_set: ChunkSet) -> dict[str, object]:
    """The ``--json`` report: every chunk's anchor and claim, and the counts."""
    rows = []
    for chunk in chunk_set.chunks:
        a = chunk.anchor
        rows.append(
            {
                "index": a.index,
                "foreign_id": chunk.given.foreign_id,
                "doc_id": a.doc_id,
                "anchor": a.anchor,
                "char_start": a.char_start,
                "char_end": a.char_end,
                "coverage": a.coverage,
                "pages": list(a.pages) if a.pages else None,
                "claim": a.claim,
                "claimed_start": a.claimed_start,
                "detail": a.detail or None,
            }
        )
    return {
        "name": chunk_set.name,
        "shape": chunk_set.shape,
        "origin": chunk_set.origin,
        "docs": dict(chunk_set.docs),
        "chunks": rows,
        "counts": chunk_set.counts(),
    }
