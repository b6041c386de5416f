"""Completion markers: which document versions are fully stored in which collection.

One marker per (chunk collection, doc_id), kept in a small collection of its own
(``chunkscope-meta``; Chroma records need an embedding, so each marker carries the
constant 1-d vector ``[1.0]``, never searched). A marker is written with
``complete=False`` before a document's records change and flipped to ``complete=True``
only after every one of its chunks is upserted, so a run killed in between leaves an
incomplete marker and the next run redoes that document.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

from core.types import ChunkPolicy, Document

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
    }


def indexed_doc(meta: Mapping[str, object]) -> IndexedDoc:
    return IndexedDoc(
        doc_id=str(meta["doc_id"]),
        sha256=str(meta["sha256"]),
        source=str(meta.get("source", "")),
        title=str(meta.get("title", "")),
        kind=str(meta.get("kind", "")),
        n_chunks=int(meta["n_chunks"]),  # type: ignore[call-overload]
        model=str(meta["model"]),
        method=str(meta["method"]),
        policy_key=str(meta["policy"]),
        policy=ChunkPolicy.from_dict(json.loads(str(meta["policy_json"]))),
        collection=str(meta["collection"]),
        complete=bool(meta["complete"]),
        updated_at=float(meta.get("updated_at", 0.0)),  # type: ignore[arg-type]
    )
