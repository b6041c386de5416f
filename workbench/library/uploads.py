"""Uploads into the library: each file read in one line of outcome, a batch with a bar.

A file that is not read (an unread suffix, a broken file, a wrong password) costs only
its own note; an encrypted one waits for its password; a new version of a document names
the stored citations it made stale. The notes are ``wording.Note``s kept under
``Key.NOTES`` for the Library page.
"""

from __future__ import annotations

import logging

import streamlit as st

from core.errors import ChunkscopeError, PasswordRequiredError
from core.formats.format_registry import upload_format
from core.ingest.files import display_name
from core.provenance.types import Document
from core.render.views import stale_note
from workbench.documents import chunk_store, kept_docs, scans, session
from workbench.documents.reads import read_document
from workbench.frame import roles
from workbench.state import Key
from workbench.widgets.wording import Note, md


def add_document(doc: Document) -> Note:
    """Put ``doc`` in the library; says if it replaced another version of the same name."""
    known = session.library().get(doc.doc_id)
    st.session_state[Key.DOCS][doc.doc_id] = doc
    session.select(doc.doc_id)
    if known is not None and known.sha256 != doc.sha256:
        st.session_state[Key.PREVIOUS].setdefault(doc.doc_id, []).append(known.sha256)
        return Note(name=doc.source, level="warning", text=stale_message(doc, known.sha256))
    n = len(doc.pages)
    pages = f"{n} page{'s' * (n != 1)}, " if doc.is_paged else ""
    line = f"read: {pages}{len(doc.text):,} chars{scans.read_note(doc)}"
    if missing := doc.pages_without_text:
        listed = ", ".join(map(str, missing[:8])) + (", …" if len(missing) > 8 else "")
        why = scans.missing_note() or " (a blank page, or OCR found no text on it)"
        return Note(name=doc.source, level="warning", text=f"{line}; no text on page {listed}{why}")
    return Note(name=doc.source, level="success", text=line)


def stale_message(doc: Document, old_sha: str) -> str:
    """Which stored citations the new version made stale (by hash, never by name)."""
    try:
        opened = chunk_store.store()
        n_stale = opened.records_with_other_sha(doc.doc_id, doc.sha256) if opened else 0
        versions = opened.indexed_documents() if opened else []
    except ChunkscopeError as exc:
        return f"changed; the store could not be checked: {exc}"
    old = [v for v in versions if v.doc_id == doc.doc_id and v.sha256 != doc.sha256]
    return stale_note(old_sha, doc.sha256, n_stale, old)


def read_upload(name: str, data: bytes, password: str | None = None) -> Note:
    """Ingest one file; errors become a one-line note, encrypted files wait for a password.

    A failure that is not a user error (a bug) still costs only this file's note, so the
    rest of a batch loads; its traceback goes to the server log."""
    shown = display_name(name)  # a newline or ESC in a name must not split its note
    if not roles.is_editor():
        return Note(name=shown, level="error", text="not read: only an editor can add documents")
    try:
        upload_format(data, name)  # an unread suffix: one line naming what is read
        doc = read_document(data, name=name, password=password)
    except PasswordRequiredError:
        st.session_state[Key.PENDING][name] = data
        return Note(name=shown, level="warning", text="is encrypted: enter its password below")
    except ChunkscopeError as exc:
        if password is not None:
            st.session_state[Key.PENDING][name] = data
        return Note(name=shown, level="error", text=str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad upload must not end the batch
        logging.getLogger(__name__).exception("reading the upload %r failed", name)
        return Note(
            name=shown,
            level="error",
            text=f"could not be read ({type(exc).__name__}); the server log has the details",
        )
    st.session_state[Key.PENDING].pop(name, None)
    note = add_document(doc)

    if (failed := kept_docs.keep(name, data, doc)) is not None:
        return Note(name=note.name, level="warning", text=f"{note.text}; {failed}")
    return note


def note_line(note: Note) -> str:
    """Markdown of a note: the file name in bold, once: where the text names the file
    itself ("the password for X is wrong"), that mention is the bold one."""
    before, found, after = note.text.partition(note.name)
    if not found:
        return f"**{md(note.name)}** {md(note.text)}"
    return f"{md(before)}**{md(note.name)}**{md(after)}"


def replace_note(note: Note) -> None:
    """Put ``note`` in place of the earlier note about the same file (others stay)."""
    notes = st.session_state[Key.NOTES]
    st.session_state[Key.NOTES] = [note if n.name == note.name else n for n in notes]
    if all(n.name != note.name for n in notes):
        st.session_state[Key.NOTES].append(note)


def read_uploads(files: list) -> None:
    """Read uploader files not seen before, with a progress bar counting files."""
    new = [f for f in files if f.file_id not in st.session_state[Key.SEEN_UPLOADS]]
    if not new or not roles.require_editor("add documents to the library"):
        return
    notes: list[Note] = []
    with st.status(f"Reading {len(new)} file(s)…", expanded=True) as status:
        bar = st.progress(0.0)
        for i, upload in enumerate(new, start=1):
            shown = md(display_name(upload.name))  # a file name is data, not markdown
            bar.progress((i - 1) / len(new), text=f"{i} of {len(new)}: {shown}")
            notes.append(read_upload(upload.name, upload.getvalue()))
            st.session_state[Key.SEEN_UPLOADS].add(upload.file_id)
        bar.progress(1.0, text=f"{len(new)} of {len(new)} read")
        failed = sum(n.level == "error" for n in notes)
        status.update(
            label=f"Read {len(new) - failed} of {len(new)} file(s)",
            state="error" if failed == len(new) else "complete",
            expanded=False,
        )
    st.session_state[Key.NOTES] = notes
    st.rerun()  # the sidebar, drawn before this, shows the new documents
