"""Store: chunks, their vectors and full provenance in ChromaDB.

Modules:

- ``chroma``: ``ChunkStore``: one cosine collection per (model, method, policy);
- ``chroma_records``: one chunk and its vector as a Chroma record, and back;
- ``client``: the Chroma client behind a store, and what its failures mean;
- ``scan``: paged reads of one collection: ids, vectors and records by filter;
- ``markers``: which document versions are fully stored in which collection;
- ``contexts``: the late-chunking context of stored chunks, from their records;
- ``lexical_index``: the BM25 index of one stored lexical collection.
"""

from core.store.chroma import ChunkStore
from core.store.chroma_records import ScopeRecords, StoredHit, UpsertReport
from core.store.markers import IndexedDoc

__all__ = ["ChunkStore", "IndexedDoc", "ScopeRecords", "StoredHit", "UpsertReport"]
