"""PDF documents through PyMuPDF: opening, errors, and the canonical text.

Canonical text rules (applied while the text is built, so offsets never disagree with it;
the builder is ``core.ingest.pdf_text``):

* Source: ``page.get_text("rawdict")`` per character, with ligatures and whitespace
  preserved (so the rules below decide) and glyphs outside the media box clipped. Image
  blocks are not extracted. Invisible text (an OCR layer under a scan) is text and kept.
  Where the compiled reader is built (``core.native.stext``) the same values are
  read from the same text page without building rawdict's dicts.
* Ligatures U+FB00..U+FB06 (ff, fi, fl, ffi, ffl, long-s t, st) expand to their letters;
  the glyph box is split evenly along x among them, so each letter has its own box.
* Whitespace inside a line: every Unicode whitespace character becomes a plain space and
  runs fold to one space (the first one's box is kept); whitespace at a line's edges is
  dropped. Control characters (C0, DEL, C1) are dropped. Nothing else is normalised
  (no Unicode normalisation; unmappable glyphs stay U+FFFD).
* Glyphs whose box centre lies outside the page are dropped; the other boxes are clamped
  to the page rect.
* Lines: PyMuPDF lines of one block that sit on one baseline (vertical overlap at least
  half the smaller height, the second to the right of the first) are one line, joined by
  an inserted space. Lines of a block are joined by ``"\\n"``.
* Hyphenation: when a line ends in a hyphen (``-``, soft hyphen, U+2010) right after a
  letter and the next line of the same block starts with a lowercase letter, the hyphen
  is dropped and the two lines join with no separator ("exam-" + "ple" -> "example"). A
  hyphen before an uppercase letter, a digit or a block end is kept, with a ``"\\n"``.
  A block ending that way, followed in reading order by a block whose first line sits
  right below it, is joined with it the same way (layout analysis cut a word). The
  cost: a compound broken at its hyphen ("well-" + "known") loses the hyphen.
* Blocks are joined by ``"\\n\\n"``, and so are pages (the separator belongs to the page
  that follows it). Page ``char_start``/``char_end`` therefore tile the text in order; a
  page without text has an empty range and ``has_text`` False.
* Pages without a text layer are read by OCR (``core.ingest.ocr``, the policy says
  which): their recognised lines take the place of text lines, in the same reading
  order, with no table finder; the lines' font is ``"OCR"``.
* Reading order: the page's blocks are ordered by a recursive XY-cut that reads columns
  left to right inside bands separated by full-width blocks (``core.ingest.reading_order``).
* Tables found by ``find_tables`` (on pages whose text and drawings form a grid, see
  ``core.tables.finder``) are read as one unit, row by row: the lines whose centres lie
  in the table are grouped into printed rows (top to bottom) and read left to right,
  fragments separated by an inserted tab and rows by ``"\\n"`` (a wrapped cell's second
  line lands in the next row). A table's text is therefore one contiguous span.

Maps: ``char_page[i]`` is the 1-based page of ``text[i]``, 0 for characters the builder
inserted (separators, joining spaces, tabs); ``char_bbox_pt[i]`` is ``(x0, y0, x1, y1)``
float32 in points in the coordinates of the page as rendered (``page.rect``: origin top
left, y down, rotation applied through ``page.rotation_matrix``), NaN for inserted ones.
"""

from __future__ import annotations

import re

import pymupdf

from core.errors import (
    NotAPdfError,
    PasswordRequiredError,
    WrongPasswordError,
    ZeroPagesError,
)
from core.ingest.ocr import OCR_FONT, OcrProgress, policy_in_force
from core.ingest.pdf_guard import mupdf_errors, page_count
from core.ingest.pdf_outline import outline_entries
from core.ingest.pdf_text import build_canonical_text
from core.provenance.types import Document, TextLine

_JUNK_TITLE = re.compile(
    r"^(untitled|title|document\d*|microsoft word - .*|.*\.(pdf|docx?|dvi|tex|indd|ps|rtf))$",
    re.I,
)


def open_pdf(data: bytes, *, name: str, password: str | None) -> tuple[pymupdf.Document, bytes]:
    """Open and authenticate; return the document and bytes that open without a password."""
    try:
        pdf = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises FileDataError and friends
        raise NotAPdfError(
            f"{name} is not a readable PDF ({type(exc).__name__}); check the file or re-export it"
        ) from None
    with mupdf_errors(name):
        return _authenticated(pdf, data, name=name, password=password)


def _authenticated(
    pdf: pymupdf.Document, data: bytes, *, name: str, password: str | None
) -> tuple[pymupdf.Document, bytes]:
    if pdf.needs_pass:
        if not password:
            raise PasswordRequiredError(f"{name} is encrypted; give its password with --password")
        if not pdf.authenticate(password):
            raise WrongPasswordError(f"the password for {name} is wrong; give the right one")
        data = pdf.tobytes(encryption=pymupdf.mupdf.PDF_ENCRYPT_NONE)
        pdf = pymupdf.open(stream=data, filetype="pdf")
    if page_count(pdf, name) == 0:
        raise ZeroPagesError(f"{name} has no pages (broken page tree); repair or re-export it")
    return pdf, data


def load_pdf(
    data: bytes,
    *,
    name: str,
    source: str,
    ids: tuple[str, str, str],
    password: str | None,
    ocr_policy: str | None = None,
    ocr_progress: OcrProgress | None = None,
) -> Document:
    """A ``Document`` of kind ``"pdf"`` (see the module docstring for the text rules).

    ``ids`` is ``(doc_id, sha256, file stem)``; ``name`` is used in error messages;
    ``ocr_policy`` (None: the policy in force, ``core.ingest.ocr.policy_in_force``) says
    which pages are read by OCR, ``ocr_progress`` is told each page before its OCR.
    """
    doc_id, sha256, stem = ids
    policy = policy_in_force(ocr_policy)
    pdf, readable = open_pdf(data, name=name, password=password)
    with mupdf_errors(name):
        built = build_canonical_text(pdf, sha256, name, ocr_policy=policy, progress=ocr_progress)
        outline = outline_entries(pdf)
        title = _metadata_title(pdf) or _first_heading_line(built.text, built.lines) or stem
    return Document(
        doc_id=doc_id,
        sha256=sha256,
        source=source,
        kind="pdf",
        text=built.text,
        title=title,
        pages=built.pages,
        lines=built.lines,
        outline=outline,
        char_page=built.char_page,
        char_bbox_pt=built.char_bbox_pt,
        ocr_lines=built.ocr_lines,
        pdf_bytes=readable,
    )


def _metadata_title(pdf: pymupdf.Document) -> str:
    raw = (pdf.metadata or {}).get("title") or ""
    title = " ".join("".join(c for c in raw if c.isprintable() or c.isspace()).split())
    if len(title) < 3 or not any(c.isalpha() for c in title) or _JUNK_TITLE.match(title):
        return ""
    return title


def _first_heading_line(text: str, lines: tuple[TextLine, ...]) -> str:
    """The largest-font line in the upper half of the first page with text, when it is
    clearly larger than that page's usual text. Lines read by OCR are left out: their
    sizes are the heights of the recognised boxes, not fonts (a drop capital's line
    would win)."""
    lines = tuple(ln for ln in lines if ln.font != OCR_FONT)
    if not lines:
        return ""
    first_page = lines[0].page
    page_lines = [ln for ln in lines if ln.page == first_page]
    sizes = sorted(ln.size_pt for ln in page_lines)
    median = sizes[len(sizes) // 2]
    candidates = [
        ln
        for ln in page_lines
        if ln.bbox_pt is not None
        and ln.size_pt >= 1.15 * median
        and sum(c.isalpha() for c in text[ln.char_start : ln.char_end]) >= 3
    ]
    if not candidates:
        return ""
    best = max(candidates, key=lambda ln: ln.size_pt)
    same = [
        ln
        for ln in page_lines
        if ln.source_block == best.source_block and ln.size_pt == best.size_pt
    ]
    title = " ".join(text[ln.char_start : ln.char_end] for ln in same)
    return title if len(title) <= 200 else ""
