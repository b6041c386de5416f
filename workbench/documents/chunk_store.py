"""The chunk store the sidebar names, opened once per process (``st.cache_resource``),
and what it has indexed: below the library and the pages, which all read the store
through ``store()``."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.errors import ChunkscopeError, StoreError
from core.store import ChunkStore
from workbench.state import Key


@st.cache_resource(show_spinner="Opening the chunk store…")
def _open_store(kind: str, address: str) -> ChunkStore:
    if kind == "server":
        return ChunkStore.open(host=address)
    return ChunkStore.open(address)


def store(*, create: bool = False) -> ChunkStore | None:
    """The store configured in the sidebar, or None for a folder that does not exist yet
    (nothing indexed); with ``create``, that folder is made (an embedded store) instead.
    Raises ``StoreError`` with a one-line message when it cannot be opened."""
    kind, address = st.session_state[Key.STORE_KIND], st.session_state[Key.STORE_ADDR].strip()
    if not address:
        raise StoreError("give a store folder or a Chroma server HOST:PORT in the sidebar")
    folder = store_folder()
    missing = folder is not None and not (folder / "chroma.sqlite3").exists()
    if missing and not create:
        return None
    return _open_store(kind, address)


def store_folder() -> Path | None:
    """The sidebar's store folder (None for a Chroma server, or no address), whether or
    not anything was indexed there yet."""
    kind, address = st.session_state[Key.STORE_KIND], st.session_state[Key.STORE_ADDR].strip()
    return Path(address).expanduser() if kind == "folder" and address else None


def existing_store() -> ChunkStore:
    """``store()`` where a page already read entries from it: ``StoreError`` with a one-line
    message when its folder no longer exists."""
    opened = store()
    if opened is None:
        raise StoreError("the store folder no longer exists: pick a store in the sidebar")
    return opened


def indexed_versions() -> dict[str, set[str]]:
    """doc_id -> sha256 of every version in the store (empty when there is no store)."""
    try:
        opened = store()
    except ChunkscopeError:
        return {}
    found: dict[str, set[str]] = {}
    for entry in opened.indexed_documents() if opened else []:
        found.setdefault(entry.doc_id, set()).add(entry.sha256)
    return found
