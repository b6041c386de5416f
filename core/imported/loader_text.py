"""A per-page loader's own text of a PDF's pages, reproduced so its offsets can be checked.

A per-page loader makes one document per page; a splitter's ``start_index`` (LangChain)
or a node parser's ``start_char_idx`` (LlamaIndex) is an offset into *that loader's* text
of *that page*, which no other extraction shares. The known extractors:

* ``pypdf``: pypdf's ``page.extract_text()`` (plain mode), which LangChain's
  ``PyPDFLoader`` (then ``.strip()``) and LlamaIndex's ``PDFReader`` (as is) read;
* ``pymupdf``: PyMuPDF's plain ``page.get_text()``, which LangChain's ``PyMuPDFLoader``
  reads (then ``.strip()``).

``PageTexts`` extracts a page once, when it is first asked for. ``hinted_extractor``
names the extractor a row's metadata points at: PyPDFLoader writes ``page_label``,
PyMuPDFLoader ``file_path`` and a ``format`` such as ``PDF 1.7``.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from functools import cache
from typing import Any

from core.provenance.types import Document

EXTRACTORS: tuple[str, ...] = ("pypdf", "pymupdf")
_LABELS = {"pypdf": "pypdf", "pymupdf": "PyMuPDF"}


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
    """One extractor's text of each page of a PDF (1-based pages, extracted on demand);
    ``None`` for a page that does not exist or that the extractor fails on."""

    def __init__(self, doc: Document, extractor: str) -> None:
        if extractor not in EXTRACTORS:
            raise ValueError(f"unknown extractor {extractor!r}")
        self.doc = doc
        self.extractor = extractor
        self._pages: dict[int, str | None] = {}
        self._reader: Any = None
        self.count = len(doc.pages)

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
