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
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from core.config import StoreLocation, resolve_store
from core.provenance.types import Chunk, ChunkPolicy, Document
from core.store import markers, scan
from core.store.chroma_records import (
    RecordBatch,
    ScopeRecords,
    StoredHit,
    UpsertReport,
    hits_from_query,
)
from core.store.client import connect, lost_server
from core.store.markers import IndexedDoc

if TYPE_CHECKING:
    from core.embed import ChunkVector

CHUNK_PREFIX = "cs-"


_NAME_BAD = re.compile(r"[^a-zA-Z0-9_-]+")
_T = TypeVar("_T")


class ChunkStore:
    """Chunks, vectors and provenance in Chroma; see the module docstring.

    Every Chroma write call has a fixed cost, so records go in batches of
    ``batch_size`` records: the client's maximum (read once) unless a smaller size is
    asked for. Collection handles are cached per name; a handle whose collection was
    deleted or recreated elsewhere raises ``NotFoundError``, which drops the cache and
    retries once with a fresh handle.
    """

    def __init__(self, client: Any, location: StoreLocation, *, batch_size: int | None = None):
        self.client = client
        self.location = location
        self.max_batch_size = int(client.get_max_batch_size())
        wanted = self.max_batch_size if batch_size is None else batch_size
        self.batch_size = max(1, min(wanted, self.max_batch_size))
        self._handles: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        host: str | None = None,
        batch_size: int | None = None,
    ) -> ChunkStore:
        """A local folder (``PersistentClient``) or a server (``HttpClient``, ``HOST:PORT``).

        Unset arguments fall back to ``$CHUNKSCOPE_CHROMA``/``$CHUNKSCOPE_STORE`` and then
        ``.chunkscope/`` (see ``core.config``). Telemetry is off.
        """
        location = resolve_store(path, host)
        return cls(connect(location), location, batch_size=batch_size)

    @staticmethod
    def collection_name(model: str, method: str, policy: ChunkPolicy) -> str:
        """``cs-<model slug>-<8 hex of the exact model name>-<method>-<policy key>``.

        The hash keeps two models whose names slug alike (paths, case) apart, and so does
        a hash of a policy key that is not a valid name as it stands; the result
        is a valid Chroma name (3-512 chars of ``[a-zA-Z0-9._-]``, alphanumeric ends).
        """
        slug = _NAME_BAD.sub("-", Path(model).name or model).strip("-_").lower()[:48]
        digest = hashlib.blake2b(model.encode(), digest_size=4).hexdigest()
        method_slug = _NAME_BAD.sub("-", method).strip("-_") or "method"
        key = policy.key
        if _NAME_BAD.search(key):  # a live policy's name (``langchain:Class(...)``)
            tag = hashlib.blake2b(key.encode(), digest_size=4).hexdigest()
            key = f"{_NAME_BAD.sub('-', key).strip('-_')[:200]}-{tag}"
        return f"{CHUNK_PREFIX}{slug or 'model'}-{digest}-{method_slug}-{key}"

    # -- collections -------------------------------------------------------------------

    def _get(self, name: str, create: dict[str, Any] | None = None) -> Any | None:
        """The cached handle of ``name``, else a fresh one (created with metadata
        ``create`` when given); None when there is none (absence is not cached)."""
        from chromadb.errors import NotFoundError

        col = self._handles.get(name)
        if col is not None:
            return col
        if create is not None:
            col = self.client.get_or_create_collection(
                name, metadata=create or None, embedding_function=None
            )
        else:
            try:
                col = self.client.get_collection(name, embedding_function=None)
            except (NotFoundError, ValueError):
                return None
        self._handles[name] = col
        return col

    def _meta(self, create: bool = False) -> Any | None:
        return self._get(markers.META_COLLECTION, {} if create else None)

    def forget_collections(self) -> None:
        """Drop every cached collection handle (the next call fetches fresh ones)."""
        self._handles.clear()

    def _retrying(self, action: Callable[[], Any]) -> Any:
        """``action()``; once more after dropping the handle cache if a cached handle
        turned out stale (its collection deleted or recreated since it was fetched).

        A server that stops answering raises ``StoreLostError`` with one line."""
        from chromadb.errors import NotFoundError

        cached = bool(self._handles)
        try:
            try:
                return action()
            except NotFoundError:
                if not cached:
                    raise
                self.forget_collections()
                return action()
        except Exception as exc:
            lost = lost_server(self.location, exc)
            if lost is None:
                raise
            raise lost from exc

    def _chunk_collections(self) -> list[Any]:
        names = sorted(str(getattr(c, "name", c)) for c in self.client.list_collections())
        found = [self._get(n) for n in names if n.startswith(CHUNK_PREFIX)]
        return [c for c in found if c is not None]

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

        Order: mark incomplete; delete this doc_id's records that ``chunks`` do not
        contain (records of other bytes (sha256), then this version's chunks no longer
        produced), in one delete; upsert in batches of ``batch_size``
        (``progress(done, total)`` after each; an exception raised there stops between
        batches); mark complete (why both marker writes: see ``core.store.markers``).
        """
        records = RecordBatch.of(doc, chunks, vectors, model=model, method=method, policy=policy)
        mark = {"model": model, "method": method, "policy": policy}
        return self._retrying(lambda: self._write_version(doc, records, mark, progress))

    def _write_version(
        self,
        doc: Document,
        rec: RecordBatch,
        mark: dict[str, Any],
        progress: Callable[[int, int], None] | None,
    ) -> UpsertReport:
        """The write protocol of ``upsert_document`` for checked records."""
        name = self.collection_name(mark["model"], mark["method"], mark["policy"])
        policy: ChunkPolicy = mark["policy"]
        info = {"hnsw:space": "cosine", "model": mark["model"], "method": mark["method"]}
        col = self._get(name, {**info, "policy": policy.key})
        assert col is not None  # asked to create it
        total = len(rec.ids)
        meta = self._meta(create=True)
        markers.write(meta, doc, collection=name, n_chunks=total, complete=False, **mark)
        other, leftover = scan.stale_ids(col, doc.doc_id, doc.sha256, rec.ids)
        self._delete_ids(col, other + leftover)
        batches = 0
        for start in range(0, total, self.batch_size):
            end = start + self.batch_size
            col.upsert(
                ids=rec.ids[start:end],
                embeddings=rec.matrix[start:end],
                metadatas=rec.metas[start:end],
                documents=rec.texts[start:end],
            )
            batches += 1
            if progress is not None:
                progress(min(end, total), total)
        markers.write(meta, doc, collection=name, n_chunks=total, complete=True, **mark)
        return UpsertReport(
            collection=name,
            doc_id=doc.doc_id,
            upserted=total,
            batches=batches,
            deleted_other_sha=len(other),
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

        def delete() -> int:
            cols = self._chunk_collections()
            removed = sum(self._delete_where(c, {"doc_id": doc_id}) for c in cols)
            meta = self._meta()
            if meta is not None:
                self._delete_where(meta, {"doc_id": doc_id})
            return removed

        return self._retrying(delete)

    # -- reading -----------------------------------------------------------------------

    def read_collection(self, name: str, read: Callable[[Any], _T], empty: _T) -> _T:
        """``read(collection)`` on the (cached) Chroma collection ``name``
        (``collection_name``), retried as every read of the store is when a server goes
        away for a moment; ``empty`` when there is no such collection. The one way into a
        collection for readers outside this class (the lexical index, the map's ids, the
        failure reader's vectors); ``read`` only reads."""

        def action() -> _T:
            col = self._get(name)
            return empty if col is None else read(col)

        return self._retrying(action)

    def count(self, *, model: str, method: str, policy: ChunkPolicy) -> int:
        name = self.collection_name(model, method, policy)
        return self.read_collection(name, lambda col: int(col.count()), 0)

    def doc_count(self, doc_id: str, *, model: str, method: str, policy: ChunkPolicy) -> int:
        name = self.collection_name(model, method, policy)
        where = {"doc_id": doc_id}
        return self.read_collection(name, lambda col: len(scan.ids_where(col, where)), 0)

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

        def check() -> bool:
            col, meta = self._get(name), self._meta()
            if col is None or meta is None:
                return False
            return markers.version_complete(meta, col, name, doc_id, sha256, n_chunks)

        return self._retrying(check)

    def indexed_documents(self) -> list[IndexedDoc]:
        """Every stored document version per collection, complete or not."""
        found: list[IndexedDoc] = self.read_collection(
            markers.META_COLLECTION, markers.read_all, []
        )
        return sorted(found, key=lambda d: (d.doc_id, d.model, d.method, d.policy_key))

    def records_with_other_sha(self, doc_id: str, sha256: str) -> int:
        """How many stored chunks of ``doc_id`` come from bytes other than ``sha256``."""
        where = scan.where_doc(doc_id, sha_ne=sha256)
        return self._retrying(
            lambda: sum(len(scan.ids_where(c, where)) for c in self._chunk_collections())
        )

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
        """Chroma's nearest neighbours (HNSW, approximate on large collections), best first.

        Up to ``k`` hits: Chroma returns fewer when the collection (or the document) holds
        fewer records, so no count is read first."""
        if k < 1:
            return []
        res = self._nearest_raw(
            vector, model, method, policy, k, doc_id, ["metadatas", "documents"]
        )
        return [] if res is None else hits_from_query(res)

    def _nearest_raw(
        self,
        vector: np.ndarray,
        model: str,
        method: str,
        policy: ChunkPolicy,
        n: int,
        doc_id: str | None,
        include: list[str],
    ) -> dict[str, Any] | None:
        """Chroma's query result for one vector (distances always included); None when
        the collection does not exist."""
        kwargs = {
            "query_embeddings": [np.asarray(vector, dtype=np.float32)],
            "n_results": n,
            "where": {"doc_id": doc_id} if doc_id else None,
            "include": [*include, "distances"],
        }
        name = self.collection_name(model, method, policy)
        return self.read_collection(name, lambda col: col.query(**kwargs), None)

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
        name = self.collection_name(model, method, policy)
        where = {"doc_id": doc_id} if doc_id else None
        return self._retrying(lambda: scan.records(self._get(name), where=where, ids=ids))

    def scope_vectors(
        self, *, model: str, method: str, policy: ChunkPolicy, doc_id: str | None = None
    ) -> tuple[list[str], np.ndarray]:
        """Ids and vectors only (Chroma's order), the cheap read for exact ranking."""
        name = self.collection_name(model, method, policy)
        where = {"doc_id": doc_id} if doc_id else None
        empty: tuple[list[str], np.ndarray] = ([], np.zeros((0, 0), np.float32))
        return self.read_collection(name, lambda col: scan.vectors_where(col, where), empty)

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
        if n < 1:
            return []
        res = self._nearest_raw(vector, model, method, policy, n, doc_id, [])
        if res is None:
            return []
        return [
            (cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0], strict=True)
        ]
