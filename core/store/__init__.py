"""Store: chunks, their vectors and full provenance in ChromaDB (see ``chroma.py``)."""

from core.store.chroma import ChunkStore
from core.store.markers import IndexedDoc
from core.store.records import ScopeRecords, StoredHit, UpsertReport

__all__ = ["ChunkStore", "IndexedDoc", "ScopeRecords", "StoredHit", "UpsertReport"]
