"""Load a file of any registered format: source bytes to a ``Document``.

``load_document`` asks the format registry (``core.formats.format_registry``) which format reads
the bytes: a PDF header in the first KiB makes a PDF (a file named as text only when it
starts with the header), otherwise the suffix decides, and anything unclaimed that is not
a binary container is UTF-8 text. The rules for each format's canonical text are in its
loader module (``core.ingest.pdf``, ``core.ingest.text``, ...); the built-in formats are
registered in ``core.formats.catalogue``. Every input is read under the limits of
``core.ingest.limits`` (only regular files; a typed one-line error past any limit).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from core.errors import EmptyFileError
from core.formats.format_registry import resolve_format
from core.ingest import limits
from core.ingest.files import display_name, read_source
from core.ingest.request import LoadRequest
from core.provenance.types import Document

__all__ = ["doc_id_for", "document_to_dict", "load_document", "sha256_of"]

_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def doc_id_for(name: str) -> str:
    """Stable id from a file name: its stem with characters outside ``[A-Za-z0-9._-]``
    replaced by ``-`` (case kept; ``"My Report (v2).pdf"`` -> ``"My-Report-v2-"``)."""
    stem = Path(str(name)).stem or Path(str(name)).name
    slug = _SLUG_BAD.sub("-", stem).strip(".")
    return slug or "document"


def load_document(
    source: str | os.PathLike[str] | bytes,
    *,
    name: str | None = None,
    password: str | None = None,
    ocr: str | None = None,
    ocr_progress: Callable[[int, int], None] | None = None,
) -> Document:
    """Read a file of any registered format (a path, or raw bytes plus their ``name``).

    ``ocr`` is the OCR policy for a PDF (``auto``, ``always``, ``never``; None: the one in
    force, ``core.ingest.ocr.policy_in_force``); ``ocr_progress(page, pages)`` is called
    before each page is read by OCR.

    Raises ``EmptyFileError``, ``NotAPdfError`` (``DamagedPdfError``), ``ZeroPagesError``,
    ``PasswordRequiredError``, ``WrongPasswordError``, ``UnsupportedFileError`` or
    ``LimitExceededError``.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        if not name:
            raise ValueError("load_document(bytes) needs name= (the file name)")
        data = bytes(source)
        display = name
    else:
        path = Path(source)
        display = str(source)
        name = name or path.name
        data = read_source(path, display)  # regular files only, at most the size limit
    base = display_name(Path(name).name)
    if not data:
        raise EmptyFileError(f"{base} is empty (0 bytes); give a file with content")
    doc_id = doc_id_for(base)
    digest = sha256_of(data)
    spec = resolve_format(data, base)
    request = LoadRequest(
        data=data,
        name=base,
        source=display,
        doc_id=doc_id,
        sha256=digest,
        stem=Path(base).stem or base,
        password=password,
        ocr=ocr,
        ocr_progress=ocr_progress,
    )
    doc = spec.load(request)
    limits.check("chars", len(doc.text), base)  # every format, whatever its loader checked
    limits.check("lines", doc.text.count("\n") + 1, base)
    return doc


def document_to_dict(doc: Document, *, with_text: bool = False) -> dict[str, object]:
    """The ``"document"`` object of the CLI's JSON output."""
    out: dict[str, object] = {
        "doc_id": doc.doc_id,
        "sha256": doc.sha256,
        "source": doc.source,
        "kind": doc.kind,
        "pages": [
            {
                "number": p.number,
                "char_start": p.char_start,
                "char_end": p.char_end,
                "width_pt": round(p.width_pt, 3),
                "height_pt": round(p.height_pt, 3),
                "has_text": p.has_text,
                **({"read_by_ocr": True} if p.read_by_ocr else {}),
            }
            for p in doc.pages
        ],
    }
    if doc.ocr_lines:
        out["ocr_lines"] = [
            {"char_start": ln.char_start, "char_end": ln.char_end, "page": ln.page,
             "confidence": ln.confidence}
            for ln in doc.ocr_lines
        ]  # fmt: skip
    if with_text:
        out["text"] = doc.text
    return out
