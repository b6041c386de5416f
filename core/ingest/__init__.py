"""Ingest: source bytes to a ``Document`` with one canonical text.

``load_document`` picks the kind from the content: bytes starting with ``%PDF-`` (within
the first KiB, as the PDF spec allows) are a PDF; a ``.pdf`` name without that header is
rejected as not a PDF; anything else must be UTF-8 text (``.md``/``.markdown`` is read as
Markdown). The rules for each kind's canonical text are in ``core.ingest.pdf`` and
``core.ingest.text``. Every input is read under the limits of ``core.ingest.limits``
(only regular files; a typed one-line error past any limit).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from core.errors import EmptyFileError, NotAPdfError, UnsupportedFileError
from core.ingest.files import display_name, read_source
from core.ingest.pdf import load_pdf
from core.ingest.text import TEXT_SUFFIXES, load_text
from core.types import Document

__all__ = ["doc_id_for", "document_to_dict", "load_document", "sha256_of"]

_PDF_MAGIC = b"%PDF-"
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
) -> Document:
    """Read a PDF, text or Markdown file (a path, or raw bytes plus their file ``name``).

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
    stem = Path(base).stem or base
    if _PDF_MAGIC in data[:1024] and not _text_mentioning_pdf(base, data):
        return load_pdf(
            data, name=base, source=display, ids=(doc_id, digest, stem), password=password
        )
    if base.lower().endswith(".pdf"):
        raise NotAPdfError(f"{base} is not a PDF (no %PDF- header); check the file")
    if data[:4] in (b"\x89PNG", b"PK\x03\x04") or data[:3] == b"\xff\xd8\xff":
        raise UnsupportedFileError(f"{base} is not a PDF or text file; give a PDF, .txt or .md")
    return load_text(data, name=base, source=display, ids=(doc_id, digest, stem))


def _text_mentioning_pdf(base: str, data: bytes) -> bool:
    """A .txt/.md file that mentions ``%PDF-`` after its start is text, not a broken PDF."""
    return base.lower().endswith(TEXT_SUFFIXES) and data.lstrip()[:5] != _PDF_MAGIC


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
            }
            for p in doc.pages
        ],
    }
    if with_text:
        out["text"] = doc.text
    return out
