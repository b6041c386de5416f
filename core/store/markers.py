"""Completion markers: which document versions are fully stored in which collection.

One marker per (chunk collection, doc_id), kept in a small collection of its own
(``chunkscope-meta``; Chroma records need an embedding, so each marker carries the
constant 1-d vector ``[1.0]``, never searched). A marker is written with
``complete=False`` before a document's records change and flipped to ``complete=True``
only after every one of its chunks is upserted, so a run killed in between leaves an
incomplete marker and the next run redoes that document.

Both writes are needed. Without the first, a forced re-index of a complete version
(same bytes, same chunk ids, new vectors) killed halfway would leave the old complete
marker and a full count of records, half of them with old vectors, so ``is_indexed``
would say True and the re-run would skip it; and ``indexed_documents`` would not show a
document whose first run died. The first write is one small upsert.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.chunk.policy_registry import policy_from_dict
from core.ingest.ocr import TEXT_READING, reading_holds, reading_key
from core.ingest.revision import PARSE_REVISION
from core.provenance.serial import Fields
from core.provenance.types import ChunkPolicy, Document
from core.store.scan import ids_where, iter_pages, where_doc

META_COLLECTION = "chunkscope-meta"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexedDoc:
    """A document version stored in one (model, method, policy) collection.

    ``complete`` is False while (or if a run died while) its records were being written.
    """

    doc_id: str
    sha256: str
    source: str
    title: str
    kind: str
    n_chunks: int
    model: str
    method: str
    policy_key: str
    policy: ChunkPolicy
    collection: str
    complete: bool
    updated_at: float
    # The reading of the bytes the records were made from (core.ingest.revision); markers
    # written before it was recorded read as 1.
    parse_revision: int = 1


def _reading_key(doc: Document) -> str:
    return reading_key(doc)


def _reading_holds(stored: object) -> bool:
    """A marker written before the reading was recorded read its PDF's text layer only."""
    return reading_holds(str(stored) if stored else TEXT_READING)


def marker_id(collection: str, doc_id: str) -> str:
    raw = f"{collection}\x1f{doc_id}".encode()
    return "m" + hashlib.blake2b(raw, digest_size=12).hexdigest()


def marker_metadata(
    doc: Document,
    *,
    collection: str,
    n_chunks: int,
    model: str,
    method: str,
    policy: ChunkPolicy,
    complete: bool,
) -> dict[str, str | int | float | bool]:
    return {
        "collection": collection,
        "doc_id": doc.doc_id,
        "sha256": doc.sha256,
        "source": doc.source,
        "title": doc.title,
        "kind": doc.kind,
        "n_chunks": n_chunks,
        "model": model,
        "method": method,
        "policy": policy.key,
        "policy_json": json.dumps(policy.to_dict(), sort_keys=True),
        "complete": complete,
        "updated_at": time.time(),
        "parse_revision": PARSE_REVISION,
        "reading": _reading_key(doc),
    }


def indexed_doc(meta: Mapping[str, object]) -> IndexedDoc:
    """A marker record as read back (``RecordError`` names a malformed field)."""
    fields = Fields(meta, f"index marker of {meta.get('doc_id', '?')}")
    return IndexedDoc(
        doc_id=fields.string("doc_id"),
        sha256=fields.string("sha256"),
        source=fields.string("source", ""),
        title=fields.string("title", ""),
        kind=fields.string("kind", ""),
        n_chunks=fields.integer("n_chunks"),
        model=fields.string("model"),
        method=fields.string("method"),
        policy_key=fields.string("policy"),
        policy=policy_from_dict(json.loads(fields.string("policy_json"))),
        collection=fields.string("collection"),
        complete=fields.boolean("complete"),
        updated_at=fields.number("updated_at", 0.0),
        parse_revision=fields.integer("parse_revision", 1),
    )


def write(
    meta_collection: Any,
    doc: Document,
    *,
    collection: str,
    n_chunks: int,
    model: str,
    method: str,
    policy: ChunkPolicy,
    complete: bool,
) -> None:
    """Upsert the marker of ``doc`` in chunk collection ``collection`` (one write call)."""
    meta = marker_metadata(
        doc,
        collection=collection,
        n_chunks=n_chunks,
        model=model,
        method=method,
        policy=policy,
        complete=complete,
    )
    meta_collection.upsert(
        ids=[marker_id(collection, doc.doc_id)], embeddings=[[1.0]], metadatas=[meta]
    )


def version_complete(
    meta_collection: Any,
    collection: Any,
    name: str,
    doc_id: str,
    sha256: str,
    n_chunks: int | None,
) -> bool:
    """True when the marker of ``doc_id`` in chunk collection ``name`` is complete for
    ``sha256`` under the current ``PARSE_REVISION`` and ``collection`` holds as many
    records of that version as the marker counts (and as ``n_chunks``, when given)."""
    got = meta_collection.get(ids=[marker_id(name, doc_id)], include=["metadatas"])
    if not got["ids"]:
        return False
    mark = got["metadatas"][0]
    if not mark["complete"] or mark["sha256"] != sha256:
        return False
    if mark.get("parse_revision", 1) != PARSE_REVISION:
        return False  # made from an older reading of these bytes: its spans may not fit
    if not _reading_holds(mark.get("reading")):
        return False  # read under another OCR choice or engine: its text differs
    expected = int(mark["n_chunks"])
    if n_chunks is not None and n_chunks != expected:
        return False
    return len(ids_where(collection, where_doc(doc_id, sha_eq=sha256))) == expected


def read_all(meta_collection: Any) -> list[IndexedDoc]:
    """Every marker in the marker collection, in Chroma's order."""
    return [
        indexed_doc(m)
        for page in iter_pages(meta_collection, include=["metadatas"])
        for m in page["metadatas"]
    ]
