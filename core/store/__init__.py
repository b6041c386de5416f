"""Store: chunks, their vectors and full provenance in ChromaDB (see ``chroma.py``)."""

from core.store.chroma import ChunkStore
from core.store.chroma_records import ScopeRecords, StoredHit, UpsertReport
from core.store.markers import IndexedDoc

__all__ = ["ChunkStore", "IndexedDoc", "ScopeRecords", "StoredHit", "UpsertReport"]
