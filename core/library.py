"""The library: the source bytes of every document, kept beside the index.

Each version is keyed by the sha256 of its bytes and remembers the original file name, the
``doc_id`` ingest gives it and when it was added (UTC, ISO 8601). The bytes are
kept exactly as they came: an encrypted PDF stays encrypted and its password is never
written anywhere (``encrypted`` only says a password will be asked for).

Where the bytes live:

- an embedded store (a folder): ``<store>/library/<sha256>.bin`` with ``<sha256>.json``
  beside it, each written to a temporary name and renamed, so a reader never sees half a
  file;
- a Chroma server: its collection ``chunkscope-library``, so every client of the server
  reads the same documents: one record ``v-<sha256>`` with the entry as metadata, and the
  bytes base64-encoded in records ``b-<sha256>-<n>`` of ``PART_BYTES`` raw bytes each
  (Chroma records need an embedding: each carries the constant 1-d vector ``[1.0]``, never
  searched).

A ``doc_id`` may have several versions: the one added last is ``current`` (the version
the workbench opens); older ones stay until the document is removed, so a stale citation
can still open the bytes it was made against. Adding bytes the library already holds
makes that version current again. ``remove_document`` drops every version, the
document's records in every collection and its markers (the lexical caches are keyed by
the stored versions, so they are rebuilt without it).
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.errors import LibraryError
from core.formats import sha256_of
from core.provenance.serial import Fields
from core.store.scan import iter_pages

if TYPE_CHECKING:
    from core.store import ChunkStore

LIBRARY_COLLECTION = "chunkscope-library"
PART_BYTES = 1 << 20  # raw bytes per Chroma record (1.33 MiB of base64)
_SHA = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryEntry:
    """One kept version: ``size_bytes`` of the file ``name``, added at ``added_at``."""

    doc_id: str
    sha256: str
    name: str
    added_at: str  # UTC, ISO 8601 to the microsecond (orders versions added in one second)
    size_bytes: int
    encrypted: bool

    def __post_init__(self) -> None:
        if not _SHA.fullmatch(self.sha256):
            raise ValueError(f"not a sha256 hex digest: {self.sha256!r}")
        if self.size_bytes < 1:
            raise ValueError("a library entry holds at least one byte")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, object]) -> LibraryEntry:
        fields = Fields(raw, f"library entry {str(raw.get('sha256', '?'))[:12]}")
        return cls(
            doc_id=fields.string("doc_id"),
            sha256=fields.string("sha256"),
            name=fields.string("name"),
            added_at=fields.string("added_at"),
            size_bytes=fields.integer("size_bytes"),
            encrypted=fields.boolean("encrypted"),
        )


class _Backend(Protocol):
    def put(self, entry: LibraryEntry, data: bytes) -> None: ...
    def touch(self, entry: LibraryEntry) -> None: ...
    def entries(self) -> list[LibraryEntry]: ...
    def read(self, sha256: str) -> bytes | None: ...
    def delete(self, sha256: str) -> None: ...
    def where(self) -> str: ...


class _FolderBackend:
    """``<folder>/<sha256>.bin`` + ``<sha256>.json``."""

    def __init__(self, folder: Path):
        self.folder = folder

    def _write(self, path: Path, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)

    def put(self, entry: LibraryEntry, data: bytes) -> None:
        self._write(self.folder / f"{entry.sha256}.bin", data)
        self.touch(entry)

    def touch(self, entry: LibraryEntry) -> None:
        self._write(self.folder / f"{entry.sha256}.json", json.dumps(entry.to_dict()).encode())

    def entries(self) -> list[LibraryEntry]:
        found = []
        for meta in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                entry = LibraryEntry.from_dict(json.loads(meta.read_text("utf-8")))
            except (OSError, ValueError, KeyError):
                continue  # a foreign or damaged file is not an entry
            if (self.folder / f"{entry.sha256}.bin").is_file():
                found.append(entry)
        return found

    def read(self, sha256: str) -> bytes | None:
        try:
            return (self.folder / f"{sha256}.bin").read_bytes()
        except FileNotFoundError:
            return None

    def delete(self, sha256: str) -> None:
        for suffix in (".json", ".bin"):  # the entry first: never an entry without bytes
            (self.folder / f"{sha256}{suffix}").unlink(missing_ok=True)

    def where(self) -> str:
        return str(self.folder)


class _ChromaBackend:
    """The ``chunkscope-library`` collection of a Chroma client (see the module docstring)."""

    def __init__(self, client: Any, describe: str):
        self.client = client
        self.describe = describe

    def _col(self) -> Any:
        return self.client.get_or_create_collection(LIBRARY_COLLECTION, embedding_function=None)

    def put(self, entry: LibraryEntry, data: bytes) -> None:
        col = self._col()
        parts = [data[i : i + PART_BYTES] for i in range(0, len(data), PART_BYTES)]
        for n, part in enumerate(parts):  # bytes first, the entry last: it makes them visible
            col.upsert(
                ids=[f"b-{entry.sha256}-{n}"],
                embeddings=[[1.0]],
                metadatas=[{"sha256": entry.sha256, "part": n}],
                documents=[base64.b64encode(part).decode("ascii")],
            )
        self.touch(entry, parts=len(parts))

    def touch(self, entry: LibraryEntry, parts: int | None = None) -> None:
        col = self._col()
        if parts is None:
            found = col.get(ids=[f"v-{entry.sha256}"], include=["metadatas"])
            parts = int(found["metadatas"][0]["parts"])
        meta = {**entry.to_dict(), "kind": "entry", "parts": parts}
        col.upsert(ids=[f"v-{entry.sha256}"], embeddings=[[1.0]], metadatas=[meta])

    def entries(self) -> list[LibraryEntry]:
        found: list[LibraryEntry] = []
        for page in iter_pages(self._col(), where={"kind": "entry"}, include=["metadatas"]):
            found.extend(LibraryEntry.from_dict(m) for m in page["metadatas"])
        return found

    def read(self, sha256: str) -> bytes | None:
        col = self._col()
        head = col.get(ids=[f"v-{sha256}"], include=["metadatas"])
        if not head["ids"]:
            return None
        n_parts = int(head["metadatas"][0]["parts"])
        ids = [f"b-{sha256}-{n}" for n in range(n_parts)]
        chunks: dict[str, str] = {}
        for start in range(0, n_parts, 16):  # a server caps one response's size
            got = col.get(ids=ids[start : start + 16], include=["documents"])
            chunks.update(zip(got["ids"], got["documents"], strict=True))
        if len(chunks) != n_parts:
            return None
        return b"".join(base64.b64decode(chunks[i]) for i in ids)

    def delete(self, sha256: str) -> None:
        col = self._col()
        col.delete(ids=[f"v-{sha256}"])
        col.delete(where={"sha256": sha256})

    def where(self) -> str:
        return f"collection {LIBRARY_COLLECTION} of the {self.describe}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def is_encrypted(data: bytes) -> bool:
    """True for a PDF that needs a password to open (anything else: False)."""
    if b"%PDF-" not in data[:1024]:
        return False
    import pymupdf

    try:
        with pymupdf.open(stream=data, filetype="pdf") as pdf:
            return bool(pdf.needs_pass)
    except Exception:  # noqa: BLE001 - a damaged file is ingest's to report, not ours
        return False


class Library:
    """The kept versions of one store; see the module docstring."""

    def __init__(self, backend: _Backend, *, clock: Callable[[], str] = _now):
        self._backend = backend
        self._clock = clock

    @classmethod
    def of_store(cls, store: ChunkStore) -> Library:
        """The library beside ``store``: its folder's ``library/``, or its server's
        ``chunkscope-library`` collection."""
        loc = store.location
        if loc.path is not None:
            return cls(_FolderBackend(loc.path / "library"))
        return cls(_ChromaBackend(store.client, loc.describe()))

    @classmethod
    def in_folder(cls, folder: Path) -> Library:
        return cls(_FolderBackend(folder))

    @classmethod
    def in_chroma(cls, client: Any, describe: str = "chroma client") -> Library:
        return cls(_ChromaBackend(client, describe))

    def where(self) -> str:
        """Where the bytes are kept, for messages."""
        return self._backend.where()

    def add(self, data: bytes, *, name: str, doc_id: str, sha256: str) -> LibraryEntry:
        """Keep ``data`` (whose sha256 the caller computed) as the current version of
        ``doc_id``; bytes already kept are not written again."""
        if sha256_of(data) != sha256:
            raise LibraryError(f"{name}: the bytes do not match sha256 {sha256[:12]}…")
        entry = LibraryEntry(
            doc_id=doc_id,
            sha256=sha256,
            name=name,
            added_at=self._clock(),
            size_bytes=len(data),
            encrypted=is_encrypted(data),
        )
        if self._backend.read(sha256) is not None:
            self._backend.touch(entry)
        else:
            self._backend.put(entry, data)
        return entry

    def versions(self) -> list[LibraryEntry]:
        """Every kept version, by doc_id, newest first within one."""
        found = self._backend.entries()
        found.sort(key=lambda e: e.added_at, reverse=True)
        found.sort(key=lambda e: e.doc_id)
        return found

    def current(self) -> list[LibraryEntry]:
        """The current version of every document, by doc_id."""
        seen: dict[str, LibraryEntry] = {}
        for entry in self.versions():
            seen.setdefault(entry.doc_id, entry)
        return list(seen.values())

    def find(self, doc_id: str, sha256: str | None = None) -> LibraryEntry | None:
        """The current version of ``doc_id``, or its version ``sha256``; None if not kept."""
        for entry in self.versions():
            if entry.doc_id == doc_id and (sha256 is None or entry.sha256 == sha256):
                return entry
        return None

    def find_version(self, sha256: str) -> LibraryEntry | None:
        """The kept version with these bytes, whatever its doc_id; None if not kept."""
        return next((e for e in self._backend.entries() if e.sha256 == sha256), None)

    def history(self, doc_id: str) -> list[LibraryEntry]:
        """Every kept version of ``doc_id``, newest (current) first."""
        return [e for e in self.versions() if e.doc_id == doc_id]

    def read(self, entry: LibraryEntry) -> bytes:
        """The bytes of ``entry``, checked against its sha256."""
        data = self._backend.read(entry.sha256)
        if data is None or sha256_of(data) != entry.sha256:
            raise LibraryError(
                f"the bytes of {entry.doc_id} (sha256 {entry.sha256[:12]}…) are missing or "
                f"damaged in {self.where()}; add the file again"
            )
        return data

    def remove(self, doc_id: str) -> list[LibraryEntry]:
        """Drop every version of ``doc_id``; returns what was dropped (empty: none)."""
        dropped = self.history(doc_id)
        for entry in dropped:
            self._backend.delete(entry.sha256)
        return dropped


@dataclass(frozen=True, slots=True, kw_only=True)
class Removal:
    """What ``remove_document`` dropped: kept versions and stored chunk records."""

    doc_id: str
    versions: tuple[LibraryEntry, ...]
    records: int


def remove_document(store: ChunkStore, doc_id: str) -> Removal:
    """Remove ``doc_id`` everywhere: every kept version, its records in every collection
    and its completion markers. Raises ``LibraryError`` when neither holds it."""
    library = Library.of_store(store)
    known = {e.doc_id for e in library.versions()}
    indexed = {d.doc_id for d in store.indexed_documents()}
    if doc_id not in known | indexed:
        listed = ", ".join(sorted(known | indexed)[:8]) or "none"
        raise LibraryError(
            f"no document {doc_id!r} in the library or the index of "
            f"{store.location.describe()} (documents: {listed}); "
            "`chunkscope library list` shows them"
        )
    records = store.delete_document(doc_id)
    return Removal(doc_id=doc_id, versions=tuple(library.remove(doc_id)), records=records)
