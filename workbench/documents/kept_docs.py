"""The store's library on the workbench side: every session sees the same documents.

Uploads are kept in the library of the store configured in the sidebar
(``core.library``); each run lists its current versions and loads them from their bytes
(parsed once per process, keyed by sha256). An encrypted document is never loaded for
everyone: its password is asked in the session that wants it, and what it opens stays in
that session (``Key.DOCS``).
"""

from __future__ import annotations

import logging

import streamlit as st

from core.errors import ChunkscopeError
from core.formats import parse_document
from core.library import Library, LibraryEntry, Removal, remove_document
from core.parse.garbled import garbled_totals
from core.provenance.types import Document
from workbench.documents import chunk_store
from workbench.documents.reads import read_document
from workbench.frame import roles
from workbench.state import Key

_log = logging.getLogger(__name__)


def kept_library(*, create: bool = False) -> Library | None:
    """The library beside the sidebar's store (a store folder's ``library/`` even before
    anything is indexed there); None when there is none (yet) or the store cannot be
    opened (the sidebar shows that error)."""
    try:
        opened = chunk_store.store(create=create)
    except ChunkscopeError:
        if create:
            raise
        return None
    if opened is None:  # nothing indexed there yet: documents may be kept all the same
        folder = chunk_store.store_folder()  # (``chunkscope open --docs`` keeps them)
        held = folder / "library" if folder is not None else None
        return Library.in_folder(held) if held is not None and held.is_dir() else None
    return Library.of_store(opened)


@st.cache_data(ttl=1.0, max_entries=8, show_spinner=False)
def _listed(where: str, _library: Library) -> list[LibraryEntry]:
    """One listing per store and second: a run asks for it from every page part, and
    another session's upload shows within a second."""
    return _library.current()


def kept_entries() -> list[LibraryEntry]:
    """The current version of every kept document ([] without a library)."""
    library = kept_library()
    try:
        return _listed(library.where(), library) if library else []
    except Exception:  # noqa: BLE001 - a server gone away: the sidebar says so
        _log.exception("listing the library failed")
        return []


@st.cache_resource(max_entries=256, show_spinner="Reading a kept document…")
def _kept_document(sha256: str, name: str, where: str, _library: Library) -> Document | None:
    """The document of kept bytes (one process-wide copy per version); None when the
    bytes need a password or no longer load (a limit lowered since)."""
    entry = _library.find_version(sha256)
    if entry is None:
        return None
    try:
        return read_document(_library.read(entry), name=name)
    except ChunkscopeError:
        return None


def forget_documents() -> None:
    """Drop every kept document read so far (the OCR policy changed: read them again)."""
    _kept_document.clear()


def open_entry(entry: LibraryEntry, password: str | None = None) -> Document | None:
    """``entry``'s document: shared when it needs no password, else opened with
    ``password`` for this session only (None without one). Raises ``WrongPasswordError``."""
    library = kept_library()
    if library is None:
        return None
    if not entry.encrypted:
        return _kept_document(entry.sha256, entry.name, library.where(), library)
    if password is None:
        return None
    doc = read_document(library.read(entry), name=entry.name, password=password)
    st.session_state[Key.DOCS][doc.doc_id] = doc
    return doc


@st.cache_data(max_entries=4096, show_spinner=False)
def _garbled(doc_id: str, sha256: str, _doc: Document) -> tuple[int, int]:
    """Two ints per version, so the listing of hundreds of documents keeps them all; the
    parse itself is not kept (the Parse page caches its own)."""
    return garbled_totals(parse_document(_doc, parser="fast").blocks)


def with_garbled(rows: list[dict[str, object]], docs: dict[str, Document]) -> list[dict]:
    """The Library rows with each document's blocks and characters flagged garbled by the
    fast parser (``core.parse.garbled``): text whose offsets hold but whose words do not."""
    out = []
    for row in rows:
        doc = docs[str(row["document"])]
        blocks, chars = _garbled(doc.doc_id, doc.sha256, doc)
        out.append({**row, "garbled blocks": blocks, "garbled chars": chars})
    return out


def kept_documents() -> dict[str, Document]:
    """The current kept versions that open without a password, by doc_id."""
    found = {}
    for entry in kept_entries():
        doc = None if entry.encrypted else open_entry(entry)
        if doc is not None:
            found[doc.doc_id] = doc
    return found


def locked_entries() -> list[LibraryEntry]:
    """Kept encrypted documents this session has not opened."""
    opened = st.session_state[Key.DOCS]
    return [
        e
        for e in kept_entries()
        if e.encrypted and getattr(opened.get(e.doc_id), "sha256", None) != e.sha256
    ]


def keep(name: str, data: bytes, doc: Document) -> str | None:
    """Keep an upload's bytes in the library; a one-line reason when that failed (or the
    session is a viewer's: only editors add to the library)."""
    if not roles.is_editor():
        return "not kept in the library: only an editor can add documents"
    try:
        library = kept_library(create=True)
        assert library is not None
        library.add(data, name=name, doc_id=doc.doc_id, sha256=doc.sha256)
        _listed.clear()
    except ChunkscopeError as exc:
        return f"not kept in the library: {exc}"
    except Exception as exc:  # noqa: BLE001 - the document still opens in this session
        _log.exception("keeping %r in the library failed", name)
        return f"not kept in the library ({type(exc).__name__}); the server log has the details"
    return None


def old_version(doc_id: str, sha256: str) -> LibraryEntry | None:
    """The kept version ``sha256`` of ``doc_id`` (a citation's old bytes), if kept."""
    library = kept_library()
    try:
        return library.find(doc_id, sha256) if library else None
    except Exception:  # noqa: BLE001
        return None


def remove(doc_id: str) -> Removal | None:
    """Remove ``doc_id`` from the library and the index, and from this session; None,
    with the one-line refusal, for a viewer."""
    if not roles.require_editor("remove documents"):
        return None
    opened = chunk_store.store()
    if opened is None:
        raise ChunkscopeError("there is no store yet, so nothing to remove")
    removal = remove_document(opened, doc_id)
    _listed.clear()
    st.session_state[Key.DOCS].pop(doc_id, None)
    return removal
