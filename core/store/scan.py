"""Paged reads of one Chroma collection: ids, vectors and records by filter.

Reads go in pages of ``PAGE_SIZE`` records because a server caps the size of one
response. Record order within a read is Chroma's (insertion order); callers that need
chunk order sort by ``(doc_id, chunk_index)`` from the metadata.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from core.store.chroma_records import ScopeRecords

PAGE_SIZE = 1000
Where = dict[str, Any]


def where_doc(doc_id: str, sha_eq: str | None = None, sha_ne: str | None = None) -> Where:
    """Filter on one document, optionally on (not) one version of it."""
    parts: list[Where] = [{"doc_id": doc_id}]
    if sha_eq is not None:
        parts.append({"doc_sha256": sha_eq})
    if sha_ne is not None:
        parts.append({"doc_sha256": {"$ne": sha_ne}})
    return parts[0] if len(parts) == 1 else {"$and": parts}


def iter_pages(collection: Any, **get_kwargs: Any) -> Iterator[dict[str, Any]]:
    """``collection.get(**get_kwargs)`` one page at a time."""
    offset = 0
    while True:
        page = collection.get(limit=PAGE_SIZE, offset=offset, **get_kwargs)
        yield page
        got = len(page["ids"])
        if got < PAGE_SIZE:
            return
        offset += got


def ids_where(collection: Any, where: Where | None) -> list[str]:
    ids: list[str] = []
    for page in iter_pages(collection, where=where, include=[]):
        ids.extend(page["ids"])
    return ids


def stale_ids(
    collection: Any, doc_id: str, sha256: str, keep: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Stored ids of ``doc_id`` to delete before writing version ``sha256`` as ``keep``:
    ``(ids of other bytes, ids of these bytes not in keep (sorted))``.

    A single ids-only read when the document has no records yet (a first index)."""
    present = ids_where(collection, {"doc_id": doc_id})
    if not present:
        return [], []
    other = ids_where(collection, where_doc(doc_id, sha_ne=sha256))
    kept = set(keep).union(other)
    return other, sorted(i for i in present if i not in kept)


def vectors_where(collection: Any, where: Where | None) -> tuple[list[str], np.ndarray]:
    """Ids and float32 vectors ``(n, dim)`` only (no metadata: the cheap read for ranking)."""
    ids: list[str] = []
    rows: list[Any] = []
    for page in iter_pages(collection, where=where, include=["embeddings"]):
        ids.extend(page["ids"])
        if len(page["ids"]):
            rows.append(np.asarray(page["embeddings"], dtype=np.float32))
    matrix = np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)
    return ids, matrix


def records(collection: Any, *, where: Where | None, ids: Sequence[str] | None) -> ScopeRecords:
    """Full records (vector, metadata, text) in chunk order: ``(doc_id, chunk_index)``."""
    rows: list[tuple[str, Any, dict, str]] = []
    if collection is not None and (ids is None or len(ids)):
        kwargs: dict[str, Any] = {"include": ["embeddings", "metadatas", "documents"]}
        if where:
            kwargs["where"] = where
        if ids is not None:
            kwargs["ids"] = list(ids)
        for page in iter_pages(collection, **kwargs):
            rows.extend(
                zip(
                    page["ids"],
                    page["embeddings"],
                    page["metadatas"],
                    page["documents"],
                    strict=True,
                )
            )
    rows.sort(key=lambda r: (r[2]["doc_id"], r[2]["chunk_index"], r[2]["char_start"]))
    matrix = np.asarray([r[1] for r in rows], dtype=np.float32)
    return ScopeRecords(
        ids=tuple(r[0] for r in rows),
        matrix=matrix.reshape(len(rows), -1) if rows else np.zeros((0, 0), np.float32),
        metadatas=tuple(r[2] for r in rows),
        texts=tuple(r[3] for r in rows),
    )
