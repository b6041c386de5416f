"""How long each document took to read, for the Parse page's time line.

Reading is a PDF's first parse: its text, the character map and the table search
(``core.ingest.load_document``); the Parse page's parser times count only the typing of
blocks after it. Kept per process by (doc_id, sha256), as the bundled samples and kept
documents are shared by every session.
"""

from __future__ import annotations

import os
import time

from core.ingest import load_document
from core.types import Document

_READ_SECONDS: dict[tuple[str, str], float] = {}


def read_document(
    source: str | os.PathLike[str] | bytes, *, name: str | None = None, password: str | None = None
) -> Document:
    """``core.ingest.load_document``, its time kept for ``read_seconds``."""
    started = time.perf_counter()
    doc = load_document(source, name=name, password=password)
    _READ_SECONDS[(doc.doc_id, doc.sha256)] = time.perf_counter() - started
    return doc


def read_seconds(doc: Document) -> float | None:
    """How long ``doc``'s version took to read in this process (``None``: not read by
    ``read_document`` here)."""
    return _READ_SECONDS.get((doc.doc_id, doc.sha256))
