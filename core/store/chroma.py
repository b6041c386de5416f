"""The chunk store on ChromaDB: one cosine collection per (model, method, policy).

Vectors are always passed explicitly (collections have no embedding function, so Chroma
never embeds text itself). Record ids are chunk ids (stable across runs), so writing is
``upsert`` and re-indexing is idempotent. Chroma reports cosine *distance*;
``cosine = 1 - distance``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config import StoreLocation, resolve_store
from core.errors import StoreError
from core.store import markers, scan
from core.store.markers import IndexedDoc
from core.store.records import (
    ScopeRecords,
    StoredHit,
    UpsertReport,
    chunk_metadata,
    hit_from_record,
)
from core.types import Chunk, ChunkPolicy, Document

if TYPE_CHECKING:
    from core.embed import ChunkVector

CHUNK_PREFIX = "cs-"
UPSERT_BATCH = 128
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_-]+")


class ChunkStore:
    """Chunks, vectors and provenance in Chroma; see the module docstring."""

    def __init__(self, client: Any, location: StoreLocation, *, batch_size: int = UPSERT_BATCH):
        self.client = client
        self.location = location
        limit = int(client.get_max_batch_size())
        self.batch_size = max(1, min(batch_size, limit))

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        host: str | None = None,
        batch_size: int = UPSERT_BATCH,
    ) -> ChunkStore:
        """A local folder (``PersistentClient``) or a server (``HttpClient``, ``HOST:PORT``).

        Unset arguments fall back to ``$CHUNKSCOPE_CHROMA``/``$CHUNKSCOPE_STORE`` and then
        ``.chunkscope/`` (see ``core.config``). Telemetry is off.
        """
        import chromadb
        from chromadb.config import Settings

        location = resolve_store(path, host)
        settings = Settings(anonymized_telemetry=False)
        try:
            if location.is_server:
                client = chromadb.HttpClient(
                    host=location.host, port=location.port, settings=settings
                )
                client.heartbeat()
            else:
                assert location.path is not None
                location.path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(location.path), settings=settings)
        except Exception as exc:
            if location.is_server:
                raise StoreError(
                    f"cannot reach a Chroma server at {location.host}:{location.port}: start "
                    f"one with `chroma run --path DIR --port {location.port}` or fix "
                    "--chroma-host / $CHUNKSCOPE_CHROMA"
                ) from exc
            raise StoreError(
                f"cannot open the store folder {location.path}: {exc}; pass --store DIR"
            ) from exc
        return cls(client, location, batch_size=batch_size)

    @staticmethod
    def collection_name(model: str, method: str, policy: ChunkPolicy) -> str:
        """``cs-<model slug>-<8 hex of the exact model name>-<method>-<policy key>``.

        The hash keeps two models whose names slug alike (paths, case) apart; the result
        is a valid Chroma name (3-512 chars of ``[a-zA-Z0-9._-]``, alphanumeric ends).
        """
        slug = _NAME_BAD.sub("-", Path(model).name or model).strip("-_").lower()[:48]
        digest = hashlib.blake2b(model.encode(), digest_size=4).hexdigest()
        method_slug = _NAME_BAD.sub("-", method).strip("-_") or "method"
        return f"{CHUNK_PREFIX}{slug or 'model'}-{digest}-{method_slug}-{policy.key}"

    # -- collections -------------------------------------------------------------------

    def _get(self, name: str) -> Any | None:
        from chromadb.errors import NotFoundError

        try:
            return self.client.get_collection(name, embedding_function=None)
        except (NotFoundError, ValueError):
            return None

    def _create(self, name: str, model: str, method: str, policy: ChunkPolicy) -> Any:
        meta = {"hnsw:space": "cosine", "model": model, "method": method, "policy": policy.key}
        return self.client.get_or_create_collection(name, metadata=meta, embedding_function=None)

    def _meta(self, create: bool = False) -> Any | None:
        if create:
            return self.client.get_or_create_collection(
                markers.META_COLLECTION, embedding_function=None
            )
        return self._get(markers.META_COLLECTION)

    def _chunk_collections(self) -> list[Any]:
        names = [getattr(c, "name", c) for c in self.client.list_collections()]
        return [self._get(n) for n in sorted(names) if str(n).startswith(CHUNK_PREFIX)]

    def _write_marker(
        self,
        doc: Document,
        name: str,
        n_chunks: int,
        *,
        complete: bool,
        model: str,
        method: str,
        policy: ChunkPolicy,
    ) -> None:
        meta = markers.marker_metadata(
            doc,
            collection=name,
            n_chunks=n_chunks,
            model=model,
            method=method,
            policy=policy,
            complete=complete,
        )
        self._meta(create=True).upsert(
            ids=[markers.marker_id(name, doc.doc_id)], embeddings=[[1.0]], metadatas=[meta]
        )

    # -- writing -----------------------------------------------------------------------

    def upsert_document(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        vectors: Sequence[ChunkVector],
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        progress: Callable[[int, int], None] | None = None,
    ) -> UpsertReport:
        """Store one document version; idempotent.

        Order: mark incomplete; delete this doc_id's records of other bytes (sha256);
        upsert in batches of ``batch_size`` (``progress(done, total)`` after each; an
        exception raised there stops between batches); delete this version's records
        that are not in ``chunks``; mark complete.
        """
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate chunk ids in {doc.doc_id}")
        metas = [
            chunk_metadata(doc, c, v, chunk_index=i, model=model, method=method, policy=policy)
            for i, (c, v) in enumerate(zip(chunks, vectors, strict=True))
        ]
        matrix = np.asarray([np.asarray(v.vector, dtype=np.float32) for v in vectors])
        if len(ids) and (matrix.ndim != 2 or not np.isfinite(matrix).all()):
            raise ValueError(f"vectors of {doc.doc_id} are not one finite matrix")
        name = self.collection_name(model, method, policy)
        col = self._create(name, model, method, policy)
        mark = {"model": model, "method": method, "policy": policy}
        self._write_marker(doc, name, len(ids), complete=False, **mark)
        deleted_other = self._delete_where(col, scan.where_doc(doc.doc_id, sha_ne=doc.sha256))
        batches = 0
        for start in range(0, len(ids), self.batch_size):
            end = start + self.batch_size
            col.upsert(
                ids=ids[start:end],
                embeddings=matrix[start:end],
                metadatas=metas[start:end],
                documents=[c.text for c in chunks[start:end]],
            )
            batches += 1
            if progress is not None:
                progress(min(end, len(ids)), len(ids))
        stored = set(scan.ids_where(col, scan.where_doc(doc.doc_id, sha_eq=doc.sha256)))
        leftover = sorted(stored - set(ids))
        self._delete_ids(col, leftover)
        self._write_marker(doc, name, len(ids), complete=True, **mark)
        return UpsertReport(
            collection=name,
            doc_id=doc.doc_id,
            upserted=len(ids),
            batches=batches,
            deleted_other_sha=deleted_other,
            deleted_leftover=len(leftover),
        )

    def _delete_ids(self, col: Any, ids: Sequence[str]) -> int:
        for start in range(0, len(ids), self.batch_size):
            col.delete(ids=list(ids[start : start + self.batch_size]))
        return len(ids)

    def _delete_where(self, col: Any, where: dict) -> int:
        return self._delete_ids(col, scan.ids_where(col, where))

    def delete_document(self, doc_id: str) -> int:
        """Remove every record and marker of ``doc_id`` (all versions, all collections)."""
        removed = sum(self._delete_where(c, {"doc_id": doc_id}) for c in self._chunk_collections())
        meta = self._meta()
        if meta is not None:
            self._delete_where(meta, {"doc_id": doc_id})
        return removed

    # -- reading -----------------------------------------------------------------------

    def count(self, *, model: str, method: str, policy: ChunkPolicy) -> int:
        col = self._get(self.collection_name(model, method, policy))
        return 0 if col is None else int(col.count())

    def doc_count(self, doc_id: str, *, model: str, method: str, policy: ChunkPolicy) -> int:
        col = self._get(self.collection_name(model, method, policy))
        return 0 if col is None else len(scan.ids_where(col, {"doc_id": doc_id}))

    def is_indexed(
        self,
        doc: Document,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        n_chunks: int | None = None,
    ) -> bool:
        """True when this exact version (sha256) is completely stored in the collection.

        Needs a complete marker for this sha256 and as many stored records of it as the
        marker counts (and as ``n_chunks``, when given).
        """
        return self.is_version_indexed(
            doc.doc_id, doc.sha256, model=model, method=method, policy=policy, n_chunks=n_chunks
        )

    def is_version_indexed(
        self,
        doc_id: str,
        sha256: str,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        n_chunks: int | None = None,
    ) -> bool:
        """``is_indexed`` for a document known only by id and source hash (not loaded)."""
        name = self.collection_name(model, method, policy)
        col, meta = self._get(name), self._meta()
        if col is None or meta is None:
            return False
        got = meta.get(ids=[markers.marker_id(name, doc_id)], include=["metadatas"])
        if not got["ids"]:
            return False
        mark = got["metadatas"][0]
        if not mark["complete"] or mark["sha256"] != sha256:
            return False
        expected = int(mark["n_chunks"])
        if n_chunks is not None and n_chunks != expected:
            return False
        return len(scan.ids_where(col, scan.where_doc(doc_id, sha_eq=sha256))) == expected

    def indexed_documents(self) -> list[IndexedDoc]:
        """Every stored document version per collection, complete or not."""
        meta = self._meta()
        if meta is None:
            return []
        found = [
            markers.indexed_doc(m)
            for page in scan.iter_pages(meta, include=["metadatas"])
            for m in page["metadatas"]  # type: ignore[union-attr]
        ]
        return sorted(found, key=lambda d: (d.doc_id, d.model, d.method, d.policy_key))

    def records_with_other_sha(self, doc_id: str, sha256: str) -> int:
        """How many stored chunks of ``doc_id`` come from bytes other than ``sha256``."""
        where = scan.where_doc(doc_id, sha_ne=sha256)
        return sum(len(scan.ids_where(c, where)) for c in self._chunk_collections())

    def query(
        self,
        vector: np.ndarray,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        k: int = 10,
        doc_id: str | None = None,
    ) -> list[StoredHit]:
        """Chroma's nearest neighbours (HNSW, approximate on large collections), best first."""
        col = self._get(self.collection_name(model, method, policy))
        if col is None or k < 1:
            return []
        res = col.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=min(k, max(1, col.count())),
            where={"doc_id": doc_id} if doc_id else None,
            include=["metadatas", "documents", "distances"],
        )
        rows = zip(
            res["ids"][0],
            res["metadatas"][0],
            res["documents"][0],
            res["distances"][0],
            strict=True,
        )
        return [
            hit_from_record(cid, meta, text, cosine=1.0 - float(dist), rank=i)
            for i, (cid, meta, text, dist) in enumerate(rows, start=1)
        ]

    def scope_records(
        self,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        doc_id: str | None = None,
        ids: Sequence[str] | None = None,
    ) -> ScopeRecords:
        """Records (vector, metadata, text) of one document, of given ids, or of the whole
        collection, in chunk order (doc_id, then position in the document)."""
        col = self._get(self.collection_name(model, method, policy))
        return scan.records(col, where={"doc_id": doc_id} if doc_id else None, ids=ids)

    def scope_vectors(
        self, *, model: str, method: str, policy: ChunkPolicy, doc_id: str | None = None
    ) -> tuple[list[str], np.ndarray]:
        """Ids and vectors only (Chroma's order), the cheap read for exact ranking."""
        col = self._get(self.collection_name(model, method, policy))
        if col is None:
            return [], np.zeros((0, 0), np.float32)
        return scan.vectors_where(col, {"doc_id": doc_id} if doc_id else None)

    def nearest(
        self,
        vector: np.ndarray,
        *,
        model: str,
        method: str,
        policy: ChunkPolicy,
        n: int,
        doc_id: str | None = None,
    ) -> list[tuple[str, float]]:
        """``(chunk_id, cosine)`` of Chroma's ``n`` nearest (HNSW), best first, ids only."""
        col = self._get(self.collection_name(model, method, policy))
        if col is None or n < 1:
            return []
        res = col.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=n,
            where={"doc_id": doc_id} if doc_id else None,
            include=["distances"],
        )
        return [
            (cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0], strict=True)
        ]
