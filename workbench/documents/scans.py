"""OCR in the workbench: the sidebar's choice of which PDF pages are read by OCR, the
line that says OCR is not installed, the notes about pages read by OCR, and the Source
page's line about a citation's OCR'd characters.

The choice is the process's (``reads.ocr_policy``): changing it clears the cached
documents and every cached result made from them, and each session's own uploads are
read again from their bytes on its next run (an encrypted upload keeps its reading until
it is opened again), so one document's bytes never have two readings in the caches.
"""

from __future__ import annotations

import streamlit as st

from core.ingest.ocr import OCR_POLICIES, engine_version, missing_line, ocr_reading
from core.provenance.types import Document
from workbench.documents import kept_docs, reads, session
from workbench.frame import roles
from workbench.state import FrameKey, Key
from workbench.widgets.wording import md

LABELS = {
    "auto": "Pages without a text layer",
    "always": "Every page",
    "never": "No page",
}


def sidebar_choice() -> None:
    """The OCR choice (an editor's; a viewer reads it), and a line when OCR is missing."""
    current = reads.ocr_policy()
    st.session_state[FrameKey.OCR_WIDGET] = current
    st.selectbox(
        "OCR (PDF pages read from their image)",
        OCR_POLICIES,
        key=FrameKey.OCR_WIDGET,
        format_func=lambda p: LABELS[p],
        disabled=not roles.is_editor(),
        on_change=_changed,
        help="Which pages of a PDF are read from their image by OCR (Tesseract), for every "
        "session of this workbench: pages without a text layer (a scan), every page (a "
        "text layer that is wrong), or none. Changing it reads the documents again.",
    )
    if engine_version() is None:
        st.caption(f":material/warning: {md(missing_line())}.")
    _reread_session_documents()


def _changed() -> None:
    chosen = st.session_state[FrameKey.OCR_WIDGET]
    if not roles.is_editor() or chosen == reads.ocr_policy():
        return
    reads.set_ocr_policy(chosen)

    session.samples.clear()
    kept_docs.forget_documents()
    st.cache_data.clear()  # parses, chunks and counts keyed by (doc_id, sha256)


def _reread_session_documents() -> None:
    """This session's uploads, read again from their bytes when the process's policy is
    not the one they were read under."""
    policy = reads.ocr_policy()
    if st.session_state.setdefault(Key.OCR_READ, policy) == policy:
        return
    docs = st.session_state[Key.DOCS]
    for doc_id, doc in list(docs.items()):
        if doc.kind != "pdf" or doc.pdf_bytes is None:
            continue
        again = reads.read_document(doc.pdf_bytes, name=doc.source)
        if again.sha256 == doc.sha256:  # an encrypted file's readable copy has another hash
            docs[doc_id] = again
    st.session_state[Key.OCR_READ] = policy


def read_note(doc: Document) -> str:
    """``"; page 1 read by OCR (confidence 0.93)"``: what an upload's note adds about
    OCR ("" when no page was read by OCR)."""
    pages = [p.number for p in doc.pages if p.read_by_ocr]
    if not pages:
        return ""
    shown = ", ".join(map(str, pages[:8])) + (", …" if len(pages) > 8 else "")
    reading = ocr_reading(doc, 0, len(doc.text))
    confidence = f" (confidence {reading.confidence:.2f})" if reading else ""
    return f"; page {shown} read by OCR{confidence}"


def missing_note() -> str:
    """What an upload's note says about pages without a text layer when OCR is missing
    or off ("" when OCR reads such pages)."""
    if reads.ocr_policy() == "never":
        return ": OCR is off (sidebar), so those pages can be neither chunked nor cited"
    if engine_version() is None:
        return f": {missing_line()}"
    return ""


def citation_line(doc: Document, start: int, end: int) -> str:
    """``"read by OCR, confidence 0.91"`` for a span read by OCR (``"62% read by OCR,
    ..."`` when only part of it was; the lowest line's confidence when it is well below
    the mean), else ""."""
    reading = ocr_reading(doc, start, end)
    if reading is None:
        return ""
    share = "" if reading.share >= 0.995 else f"{reading.share:.0%} "
    line = f"{share}read by OCR, confidence {reading.confidence:.2f}"
    if reading.lowest < reading.confidence - 0.1:
        line += f" (lowest line {reading.lowest:.2f})"
    return line
