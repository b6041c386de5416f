"""The lexical index of one stored lexical collection (``bm25``, ``contextual-bm25``).

The records themselves (provenance, text, the contextual prefix) live in the method's
Chroma collection like any other method's, written by the same index runs with the same
completion markers, so a run stopped half-way is finished by running it again and a
Chroma server shares them with every client. (Chroma keeps a vector per record; a
lexical record carries the constant ``[1.0]``, which nothing ranks.) The term index is
derived from those records: built with bm25s, persisted beside the collection, keyed by
the collection's *fingerprint* (its complete document versions: id, sha256, chunk count,
time of writing), and rebuilt whenever that changes, so it never disagrees with the
records it ranks.

Where it is kept: ``<store folder>/lexical/<collection>/<fingerprint>/`` for an embedded
store; for a Chroma server, ``$CHUNKSCOPE_STORE`` (default ``.chunkscope/``) under
``lexical-cache/<host>-<port>/`` on each client (the index is rebuilt from the shared
records where it is missing). Loaded indexes are kept in memory, a few at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.bounded_cache import BoundedCache
from core.config import store_folder
from core.methods.lexical import Bm25Index, indexed_text, matched_words
from core.provenance.types import ChunkPolicy
from core.store import markers, scan
from core.store.chroma_records import StoredHit, hit_from_record

if TYPE_CHECKING:
    from core.store.chroma import ChunkStore

# 2: the term index is kept in ``TERMS_FOLDER`` (1: in a folder named for the method)
FORMAT_VERSION = 2
TERMS_FOLDER = "terms"  # bm25s saves its term index in this folder of a fingerprint's
_KEEP_LOADED = 4
# (store, collection, fingerprint) -> its index; thread-safe (the workbench's threads share it)
_LOADED: BoundedCache[tuple[str, str, str], LexicalCollection] = BoundedCache(_KEEP_LOADED)
# An embedded Chroma store's SQLite database and its journals: what a write changes.
_SQLITE_FILES = ("chroma.sqlite3", "chroma.sqlite3-wal", "chroma.sqlite3-journal")
_FINGERPRINTS: dict[tuple[str, str], tuple[tuple[tuple[int, int] | None, ...], str]] = {}
_KEEP_FINGERPRINTS = 64


@dataclass(slots=True)
class LexicalCollection:
    """One collection's records in chunk order with their BM25 index (rows align)."""

    name: str
    fingerprint: str
    ids: tuple[str, ...]
    metadatas: tuple[dict[str, Any], ...]
    texts: tuple[str, ...]
    index: Bm25Index
    doc_rows: dict[str, tuple[int, int]]
    row_of: dict[str, int]

    @classmethod
    def of(cls, name: str, fingerprint: str, records: Any, index: Bm25Index | None = None):
        rows: dict[str, tuple[int, int]] = {}
        for row, meta in enumerate(records.metadatas):  # chunk order: a document is a run
            doc_id = str(meta["doc_id"])
            rows[doc_id] = (rows.get(doc_id, (row, row))[0], row + 1)
        if index is None:
            index = Bm25Index.build(
                [
                    indexed_text(str(m.get("prefix", "")), t)
                    for m, t in zip(records.metadatas, records.texts, strict=True)
                ]
            )
        return cls(
            name=name,
            fingerprint=fingerprint,
            ids=tuple(records.ids),
            metadatas=tuple(records.metadatas),
            texts=tuple(records.texts),
            index=index,
            doc_rows=rows,
            row_of={cid: row for row, cid in enumerate(records.ids)},
        )

    def rows(self, doc_id: str | None) -> tuple[int, int]:
        """``[lo, hi)``: the rows of one document (chunk order keeps them together), or all."""
        if doc_id is None:
            return 0, len(self.ids)
        return self.doc_rows.get(doc_id, (0, 0))

    def hit(self, row: int, *, score: float, rank: int, query: str) -> StoredHit:
        hit = hit_from_record(
            self.ids[row], self.metadatas[row], self.texts[row], score=score, rank=rank
        )
        start = hit.char_start
        words = tuple((start + a, start + b) for a, b in matched_words(query, hit.text))
        return replace(hit, matched=words)


def fingerprint(store: ChunkStore, name: str) -> str:
    """A digest of the complete document versions a collection holds (its markers).

    An embedded store's markers live in its SQLite file: while that file (and its
    journals) keep their size and modification time (nanoseconds on ext4, XFS, APFS;
    100 ns on NTFS), nothing was written, by this process or another, so the last
    digest read is still the one and a query does not read the markers again. A
    server's markers are read every time."""
    stamp = _stamp(store)
    key = (store.location.describe(), name)
    known = _FINGERPRINTS.get(key)
    if stamp is not None and known is not None and known[0] == stamp:
        return known[1]
    digest = _read_fingerprint(store, name)
    if stamp is not None:
        _FINGERPRINTS[key] = (stamp, digest)
        while len(_FINGERPRINTS) > _KEEP_FINGERPRINTS:
            _FINGERPRINTS.pop(next(iter(_FINGERPRINTS)), None)  # a thread may have taken it
    return digest


def _stamp(store: ChunkStore) -> tuple[tuple[int, int] | None, ...] | None:
    """Size and modification time of an embedded store's SQLite files (None: a server)."""
    folder = store.location.path
    if folder is None:
        return None
    found: list[tuple[int, int] | None] = []
    for suffix in _SQLITE_FILES:
        try:
            info = os.stat(folder / suffix)
        except OSError:
            found.append(None)
        else:
            found.append((info.st_size, info.st_mtime_ns))
    return tuple(found)


def _read_fingerprint(store: ChunkStore, name: str) -> str:
    def read(meta: Any) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = []
        for page in scan.iter_pages(meta, where={"collection": name}, include=["metadatas"]):
            for m in page["metadatas"]:
                if m.get("complete"):
                    found.append((m["doc_id"], m["sha256"], m["n_chunks"], m["updated_at"]))
        return sorted(found)

    empty: list[tuple[Any, ...]] = []
    entries = store.read_collection(markers.META_COLLECTION, read, empty)
    raw = json.dumps([FORMAT_VERSION, *entries]).encode()
    return hashlib.blake2b(raw, digest_size=10).hexdigest()


def cache_root(store: ChunkStore) -> Path:
    """The folder that holds the persisted lexical indexes of ``store``."""
    loc = store.location
    if loc.path is not None:
        return loc.path / "lexical"

    return store_folder().resolve() / "lexical-cache" / f"{loc.host}-{loc.port}"


def _save(folder: Path, col: LexicalCollection) -> None:
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if col.index.n:
        col.index.retriever.save(str(tmp / TERMS_FOLDER), show_progress=False)
    payload = {
        "format": FORMAT_VERSION,
        "ids": col.ids,
        "metadatas": col.metadatas,
        "texts": col.texts,
    }
    (tmp / "records.json").write_text(json.dumps(payload, ensure_ascii=False), "utf-8")
    for old in folder.parent.glob("*"):
        if old != tmp:
            shutil.rmtree(old, ignore_errors=True)  # older fingerprints: never read again
    tmp.rename(folder)


def _load(folder: Path, name: str, fp: str) -> LexicalCollection | None:
    try:
        payload = json.loads((folder / "records.json").read_text("utf-8"))
        if payload.get("format") != FORMAT_VERSION:
            return None
        import bm25s

        records = _Records(payload["ids"], payload["metadatas"], payload["texts"])
        index = Bm25Index(n=len(records.ids), retriever=None)
        if records.ids:
            index.retriever = bm25s.BM25.load(str(folder / TERMS_FOLDER), show_progress=False)
        else:
            index = Bm25Index.build([])
        return LexicalCollection.of(name, fp, records, index)
    except (OSError, ValueError, KeyError):
        return None  # unreadable or half-written: rebuilt from the records


@dataclass(slots=True)
class _Records:
    ids: list[str]
    metadatas: list[dict[str, Any]]
    texts: list[str]


def lexical_collection(
    store: ChunkStore, *, model: str, method: str, policy: ChunkPolicy
) -> LexicalCollection | None:
    """The current lexical index of a collection: from memory, from disk, or built from
    the stored records (then persisted); None when the collection does not exist."""
    name = store.collection_name(model, method, policy)
    fp = fingerprint(store, name)
    key = (store.location.describe(), name, fp)
    found = _LOADED.get(key)
    if found is not None:
        return found
    folder = cache_root(store) / name / fp
    col = _load(folder, name, fp) if folder.exists() else None
    if col is None:
        records = store.read_collection(name, lambda c: scan.records(c, where=None, ids=None), None)
        if records is None:
            return None
        col = LexicalCollection.of(name, fp, records)
        with contextlib.suppress(OSError):  # a read-only place: it answers from memory
            _save(folder, col)
    _LOADED.put(key, col)
    return col
