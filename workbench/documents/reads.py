"""How the workbench reads documents: the OCR policy it reads PDFs under, a progress bar
while pages are read by OCR, and how long each document took, for the Parse page's time
line.

Reading is a PDF's first parse: its text, the character map and the table search
(``core.formats.load_document``); the Parse page's parser times count only the typing of
blocks after it. Kept per process by (doc_id, sha256), as the bundled samples and kept
documents are shared by every session.

The OCR policy (``core.ingest.ocr``) is one for the whole process, not one a session:
every cache of the workbench is keyed by a document's (doc_id, sha256), so the same bytes
must have one reading in the process. It starts as ``$CHUNKSCOPE_OCR`` (else ``auto``);
an editor changes it in the sidebar (``workbench.documents.scans``), which reads the documents
again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.formats import load_document
from core.ingest.ocr import policy_in_force
from core.provenance.types import Document

_READ_SECONDS: dict[tuple[str, str], float] = {}
_POLICY: list[str] = []  # the process's OCR policy once set (empty: the one in force)


def ocr_policy() -> str:
    """The OCR policy this process reads PDFs under."""
    return _POLICY[-1] if _POLICY else policy_in_force()


def set_ocr_policy(policy: str) -> None:
    """Read PDFs under ``policy`` from now on (``workbench.documents.scans`` clears the caches)."""
    _POLICY[:] = [policy_in_force(policy)]


def read_document(
    source: str | os.PathLike[str] | bytes,
    *,
    name: str | None = None,
    password: str | None = None,
    ocr: str | None = None,
) -> Document:
    """``core.formats.load_document`` under the process's OCR policy (or ``ocr``), with a
    progress bar in place while pages are read by OCR; its time kept for
    ``read_seconds``."""
    policy = ocr or ocr_policy()
    started = time.perf_counter()
    with _ocr_progress() as progress:
        doc = load_document(source, name=name, password=password, ocr=policy, ocr_progress=progress)
    _READ_SECONDS[(doc.doc_id, doc.sha256)] = time.perf_counter() - started
    return doc


class _ocr_progress:  # noqa: N801 - used as a context manager, like a function
    """A progress bar drawn on the first page read by OCR, removed when the read ends."""

    def __init__(self) -> None:
        self._holder: DeltaGenerator | None = None

    def __enter__(self) -> Callable[[int, int], None]:
        return self._update

    def _update(self, page: int, pages: int) -> None:
        if self._holder is None:
            self._holder = st.empty()
        text = f"Reading page {page} of {pages} by OCR (about 2 s a page)…"
        self._holder.progress(min(1.0, (page - 1) / max(pages, 1)), text=text)

    def __exit__(self, *exc: object) -> None:
        if self._holder is not None:
            self._holder.empty()


def read_seconds(doc: Document) -> float | None:
    """How long ``doc``'s version took to read in this process (``None``: not read by
    ``read_document`` here)."""
    return _READ_SECONDS.get((doc.doc_id, doc.sha256))


COLD_START_LINE = (
    "Starting up: reading the bundled samples and the documents kept in the library, "
    "once after the workbench starts…"
)
_WARM: list[bool] = []  # a frame was drawn whole in this process: the documents are read


@contextmanager
def cold_start_notice() -> Iterator[None]:
    """On the first frame of a fresh process, a line in the main area while the sidebar
    reads every document (the samples, the library's kept documents, the store): what a
    page, or a citation link opened after a restart, shows instead of a blank area. It
    stays when the reading fails, beside the error."""
    if _WARM:
        yield
        return
    holder = st.empty()
    holder.info(COLD_START_LINE, icon=":material/hourglass_top:")
    yield
    holder.empty()
    _WARM.append(True)
