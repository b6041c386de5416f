"""A per-page loader's own text of a PDF's pages, reproduced so its offsets can be checked.

A per-page loader makes one document per page; a splitter's ``start_index`` (LangChain)
or a node parser's ``start_char_idx`` (LlamaIndex) is an offset into *that loader's* text
of *that page*, which no other extraction shares. The known extractors:

* ``pypdf``: pypdf's ``page.extract_text()`` (plain mode), which LangChain's
  ``PyPDFLoader`` (then ``.strip()``) and LlamaIndex's ``PDFReader`` (as is) read;
* ``pymupdf``: PyMuPDF's plain ``page.get_text()``, which LangChain's ``PyMuPDFLoader``
  reads (then ``.strip()``).

``PageTexts`` extracts a page once, when it is first asked for, and keeps it for the
document (by its SHA-256 and the extractor's name and version): in memory for the last
``KEPT_DOCUMENTS`` documents of the process, and in a folder when one is given (the
store's ``loader_text/``, where ``import-chunks`` keeps it), so a second import of the same
PDF (another split, the workbench after the command line) checks its claims in the same
text without extracting it again. ``hinted_extractor``
names the extractor a row's metadata points at: PyPDFLoader writes ``page_label``,
PyMuPDFLoader ``file_path`` and a ``format`` such as ``PDF 1.7``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from core.bounded_cache import BoundedCache
from core.provenance.types import Document

EXTRACTORS: tuple[str, ...] = ("pypdf", "pymupdf")
_LABELS = {"pypdf": "pypdf", "pymupdf": "PyMuPDF"}
KEPT_DOCUMENTS = 16  # documents whose extracted pages the process keeps in memory
FOLDER_NAME = "loader_text"  # beside the chunk sets in the store

# (document sha256, extractor label) -> its page texts, shared by every PageTexts of it
_KEPT: BoundedCache[tuple[str, str], dict[int, str | None]] = BoundedCache(KEPT_DOCUMENTS)


def forget() -> None:
    """Drop the page texts kept in memory (a first import of every document again)."""
    _KEPT.clear()


def _kept(key: tuple[str, str]) -> dict[int, str | None]:
    """The page texts kept for ``key`` (shared by every ``PageTexts`` of it)."""
    return _KEPT.get_or_compute(key, dict)


@cache
def extractor_label(name: str) -> str:
    """The extractor with its library's version: ``pypdf 7.1.1``, ``PyMuPDF 2.0``."""
    try:
        if name == "pypdf":
            import pypdf

            return f"pypdf {pypdf.__version__}"
        import pymupdf

        return f"PyMuPDF {pymupdf.__version__}"
    except ImportError:  # pragma: no cover - both are dependencies
        return _LABELS[name]


def hinted_extractor(meta: Mapping[str, Any]) -> str | None:
    """The extractor a row's metadata points at, or ``None``."""
    if "file_path" in meta and str(meta.get("format", "")).startswith("PDF"):
        return "pymupdf"  # LangChain's PyMuPDFLoader copies PyMuPDF's metadata
    if "page_label" in meta:
        return "pypdf"  # LangChain's PyPDFLoader, LlamaIndex's PDFReader
    return None


class PageTexts:
    """One extractor's text of each page of a PDF (1-based pages, extracted on demand and
    kept: see the module doc); ``None`` for a page that does not exist or that the
    extractor fails on. ``folder``: where the pages are kept on disk (read at once,
    written by ``save``)."""

    def __init__(self, doc: Document, extractor: str, folder: Path | None = None) -> None:
        if extractor not in EXTRACTORS:
            raise ValueError(f"unknown extractor {extractor!r}")
        self.doc = doc
        self.extractor = extractor
        self._key = (doc.sha256, extractor_label(extractor))
        self._pages = _kept(self._key)
        self._reader: Any = None
        self.count = len(doc.pages)
        self.folder = folder
        self._stored: set[int] = set()
        if folder is not None:
            self._read_kept()

    def _file(self) -> Path:
        assert self.folder is not None
        version = self._key[1].replace(" ", "-")
        return self.folder / f"{self.doc.sha256}-{version}.json"

    def _read_kept(self) -> None:
        """The pages kept in the folder for this document and extractor, if any; a file
        that does not read as this document's is ignored (the pages are extracted)."""
        try:
            data = json.loads(self._file().read_text(encoding="utf-8"))
            if data.get("document_sha256") != self._key[0] or data.get("extractor") != self._key[1]:
                return
            pages = {int(n): (t if isinstance(t, str) else None) for n, t in data["pages"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        for number, text in pages.items():
            self._pages.setdefault(number, text)
        self._stored = set(pages)

    def save(self) -> None:
        """Keep the pages extracted so far in ``folder`` (nothing without one, or when the
        file already holds them all)."""
        if self.folder is None or set(self._pages) <= self._stored:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._file()
        data = {"document_sha256": self._key[0], "extractor": self._key[1],
                "pages": {str(n): t for n, t in sorted(self._pages.items())}}  # fmt: skip
        partial = path.with_suffix(f".json.{os.getpid()}-{threading.get_ident()}.part")
        partial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        partial.replace(path)
        self._stored = set(self._pages)

    @property
    def usable(self) -> bool:
        """Whether the document is a PDF whose bytes we hold."""
        return self.doc.pdf_bytes is not None and self.count > 0

    def _open(self) -> Any:
        if self._reader is None:
            data = self.doc.pdf_bytes or b""
            if self.extractor == "pypdf":
                import pypdf

                self._reader = pypdf.PdfReader(io.BytesIO(data))
            else:
                import pymupdf

                self._reader = pymupdf.open(stream=data, filetype="pdf")
        return self._reader

    def page(self, number: int) -> str | None:
        if number in self._pages:
            return self._pages[number]
        text: str | None = None
        if self.usable and 1 <= number <= self.count:
            quiet = logging.getLogger("pypdf")  # its font warnings would fill the output
            level = quiet.level
            quiet.setLevel(logging.ERROR)
            try:
                reader = self._open()
                if self.extractor == "pypdf":
                    text = reader.pages[number - 1].extract_text()
                else:
                    text = reader[number - 1].get_text()
            except Exception:  # noqa: BLE001 - a page the extractor fails on is unchecked
                text = None
            finally:
                quiet.setLevel(level)
        self._pages[number] = text
        return text
