"""The canonical-text builder for PDFs (the rules are in ``core.ingest.pdf``'s docstring).

Works page by page on ``page.get_text("rawdict")`` (or on the same lines read by the
compiled reader, ``core.native.stext``): cleans each line's characters and
merges lines that share a baseline (``core.ingest.pdf_lines``), orders the page's blocks
(``reading_order``), and appends text plus one box row per character to flat lists that
become numpy arrays once at the end. Box rows are collected in the page's unrotated
text space, then moved to the rendered page's space (``page.rotation_matrix``) and
clamped to the page rect, page by page.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np
import pymupdf

from core.ingest import limits, ocr, pdf_guard
from core.ingest.gc_pause import paused_gc
from core.ingest.pdf_lines import (
    NAN_BOX,
    Line,
    block_lines,
    clean_line,
    clean_lines,
    grid_fragments,
    hyphenated,
    merge_baselines,
    table_rows,
    take_table_lines,
    visible_char_boxes,
)
from core.ingest.reading_order import reading_order
from core.native import stext as stext_native
from core.provenance.geometry import bounding
from core.provenance.types import BBox, OcrLine, Page, TextLine
from core.tables.finder import TableBudget, TableRegion, table_regions

RAWDICT_FLAGS = (
    pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
)
_WORD = re.compile(r"[^\W_]")
_MONO_FONT = re.compile(r"mono|courier|consol|cmtt|sftt|lmtt|menlo|inconsolata|typewriter", re.I)
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|cmbx|sfbx|\.b$|-b$|bx\d", re.I)
_ITALIC_FONT = re.compile(r"italic|oblique|cmti|sfti|cmsl|-it$|\.i$", re.I)


@dataclass(slots=True)
class CanonicalText:
    """What the builder produces; ``char_page``/``char_bbox_pt`` align with ``text``."""

    text: str
    char_page: np.ndarray
    char_bbox_pt: np.ndarray
    pages: tuple[Page, ...]
    lines: tuple[TextLine, ...]
    ocr_lines: tuple[OcrLine, ...] = ()


@dataclass(slots=True)
class _Builder:
    parts: list[str] = field(default_factory=list)
    boxes: list[BBox] = field(default_factory=list)
    page_boxes: list[np.ndarray] = field(default_factory=list)  # per page, float32
    pos: int = 0
    # (char_start, char_end, page, source_block, font, size_pt, flags, unrotated bbox)
    line_records: list[tuple] = field(default_factory=list)
    tables: TableBudget = field(default_factory=TableBudget)  # find_tables, this document
    # (char_start, char_end, page, confidence) of every emitted line read by OCR
    ocr_records: list[tuple[int, int, int, float]] = field(default_factory=list)

    def add(self, text: str, boxes: list[BBox]) -> None:
        self.parts.append(text)
        self.boxes.extend(boxes)
        self.pos += len(text)

    def take_boxes(self) -> np.ndarray:
        """The boxes added since the last call, as an ``(n, 4)`` float32 array (a page's
        boxes are moved out of their tuples while the page's objects are fresh)."""
        taken = stext_native.box_array([self.boxes], np.float32)
        self.boxes.clear()
        return taken

    def insert(self, text: str) -> None:
        self.parts.append(text)
        self.boxes.extend([NAN_BOX] * len(text))
        self.pos += len(text)


@dataclass(frozen=True, slots=True)
class _Geometry:
    """One page's rendered rect and its unrotated-to-rendered matrix (a, b, c, d, e, f)."""

    rect: BBox
    matrix: tuple[float, float, float, float, float, float]
    rotated: bool

    @classmethod
    def of(cls, page: pymupdf.Page, rotation: pymupdf.Matrix) -> _Geometry:
        """``rotation``: the page's ``rotation_matrix`` (the caller read it already)."""
        r, m = page.rect, rotation
        return cls(
            rect=(r.x0, r.y0, r.x1, r.y1),
            matrix=(m.a, m.b, m.c, m.d, m.e, m.f),
            rotated=bool(page.rotation % 360),
        )

    def box(self, box: BBox) -> BBox:
        """A box moved to page space and clamped to the page rect."""
        x0, y0, x1, y1 = box
        if self.rotated:
            a, b, c, d, e, f = self.matrix
            xs = (a * x0 + c * y0 + e, a * x1 + c * y1 + e)
            ys = (b * x0 + d * y0 + f, b * x1 + d * y1 + f)
            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        rx0, ry0, rx1, ry1 = self.rect
        return (
            min(max(x0, rx0), rx1),
            min(max(y0, ry0), ry1),
            min(max(x1, rx0), rx1),
            min(max(y1, ry0), ry1),
        )

    def boxes(self, boxes: np.ndarray) -> None:
        """In place, for an ``(n, 4)`` array: like ``box`` for every row."""
        if self.rotated:
            a, b, c, d, e, f = self.matrix
            xs, ys = boxes[:, [0, 2]], boxes[:, [1, 3]]
            tx = xs * a + ys * c + e
            ty = xs * b + ys * d + f
            boxes[:, 0], boxes[:, 2] = tx.min(axis=1), tx.max(axis=1)
            boxes[:, 1], boxes[:, 3] = ty.min(axis=1), ty.max(axis=1)
        rx0, ry0, rx1, ry1 = self.rect
        boxes[:, [0, 2]] = np.clip(boxes[:, [0, 2]], rx0, rx1)
        boxes[:, [1, 3]] = np.clip(boxes[:, [1, 3]], ry0, ry1)


def build_canonical_text(
    pdf: pymupdf.Document,
    doc_sha256: str,
    name: str = "the PDF",
    *,
    ocr_policy: str = "never",
    progress: ocr.OcrProgress | None = None,
) -> CanonicalText:
    """Canonical text, per-character maps, pages and lines of an opened, readable PDF.

    Table regions (``core.tables.finder``, cached under ``doc_sha256``) are read row by
    row as one unit. Every page is checked against ``core.ingest.limits`` before its
    characters are extracted (``core.ingest.pdf_guard``), and the text so far against
    the ``chars`` and ``lines`` limits after each page; ``name`` names the file in errors.
    Pages are read by OCR as ``ocr_policy`` says (``core.ingest.ocr``; ``progress`` is
    told each page before it is recognised); an OCR'd page is read as paragraphs in
    reading order, without the table finder.
    """
    use_ocr = ocr.require_engine(ocr_policy)
    with paused_gc():
        return _build(pdf, doc_sha256, name, ocr_policy if use_ocr else "never", progress)


def _build(
    pdf: pymupdf.Document,
    doc_sha256: str,
    name: str,
    ocr_policy: str,
    progress: ocr.OcrProgress | None,
) -> CanonicalText:
    builder = _Builder()
    pages: list[Page] = []
    geometry: list[_Geometry] = []
    ocr_spent_s = 0.0  # the OCR of a document is bounded by the ``ocr_s`` limit
    n_pages = pdf_guard.page_count(pdf, name)
    pdf_guard.check_content(pdf, n_pages, name)  # before MuPDF interprets any page
    for number in range(n_pages):
        page = pdf_guard.normalise_rotation(pdf, pdf[number], name)
        start = builder.pos
        rotation = page.rotation_matrix  # read once: the table pass needs it too
        blocks = [] if ocr_policy == "always" else _page_blocks(page, name)
        read_by_ocr = ocr_policy == "always" or (ocr_policy == "auto" and not blocks)
        if read_by_ocr:
            if progress is not None:
                progress(number + 1, n_pages)
            if ocr_spent_s > limits.value("ocr_s"):
                limits.exceeded("ocr_s", name, where=f"by page {number + 1}")
            started = time.perf_counter()
            blocks = _ocr_blocks(page, doc_sha256, name)
            ocr_spent_s += time.perf_counter() - started
            found = sum(len(line.text) for lines in blocks for line in lines)
            limits.check("page_chars", found, name, where=f"page {number + 1}")
        _add_page(builder, page, blocks, doc_sha256, rotation, find_tables=not read_by_ocr)
        builder.page_boxes.append(builder.take_boxes())
        limits.check("chars", builder.pos, name)
        limits.check("lines", len(builder.line_records), name)
        geo = _Geometry.of(page, rotation)
        geometry.append(geo)
        pages.append(
            Page(
                number=page.number + 1,
                char_start=start,
                char_end=builder.pos,
                width_pt=float(geo.rect[2] - geo.rect[0]),
                height_pt=float(geo.rect[3] - geo.rect[1]),
                has_text=builder.pos > start,
                rotation_deg=int(page.rotation),
                read_by_ocr=read_by_ocr and builder.pos > start,
            )
        )
    text = "".join(builder.parts)
    char_bbox = np.concatenate([np.zeros((0, 4), dtype=np.float32), *builder.page_boxes])
    char_page = np.zeros(len(text), dtype=np.int32)
    for page_info in pages:
        if page_info.char_end > page_info.char_start:
            char_page[page_info.char_start : page_info.char_end] = page_info.number
    for geo, s, e in _geometry_runs(pages, geometry):
        geo.boxes(char_bbox[s:e])
    char_page[np.isnan(char_bbox[:, 0])] = 0
    styles = _FontStyles()
    lines = tuple(
        TextLine(
            char_start=start,
            char_end=end,
            page=number,
            bbox_pt=geometry[number - 1].box(raw),
            source_block=block,
            font=font,
            size_pt=round(float(size), 2),
            bold=bool(flags & pymupdf.TEXT_FONT_BOLD) or styles.bold(font),
            italic=bool(flags & pymupdf.TEXT_FONT_ITALIC) or styles.italic(font),
            monospace=bool(flags & pymupdf.TEXT_FONT_MONOSPACED) or styles.monospace(font),
        )
        for start, end, number, block, font, size, flags, raw in builder.line_records
    )
    ocr_lines = tuple(
        OcrLine(char_start=s, char_end=e, page=p, confidence=c)
        for s, e, p, c in builder.ocr_records
    )
    return CanonicalText(
        text=text,
        char_page=char_page,
        char_bbox_pt=char_bbox,
        pages=tuple(pages),
        lines=lines,
        ocr_lines=ocr_lines,
    )


def _geometry_runs(
    pages: list[Page], geometry: list[_Geometry]
) -> list[tuple[_Geometry, int, int]]:
    """Character ranges of consecutive pages with equal geometry (page ranges tile the
    text), so their boxes are moved in one call."""
    runs: list[tuple[_Geometry, int, int]] = []
    for page_info, geo in zip(pages, geometry, strict=True):
        s, e = page_info.char_start, page_info.char_end
        if e <= s:
            continue
        if runs and runs[-1][0] == geo and runs[-1][2] == s:
            runs[-1] = (geo, runs[-1][1], e)
        else:
            runs.append((geo, s, e))
    return runs


class _FontStyles:
    """Whether a font name says bold, italic or monospace (each name searched once)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[bool, bool, bool]] = {}

    def _of(self, font: str) -> tuple[bool, bool, bool]:
        found = self._seen.get(font)
        if found is None:
            found = self._seen[font] = (
                bool(_BOLD_FONT.search(font)),
                bool(_ITALIC_FONT.search(font)),
                bool(_MONO_FONT.search(font)),
            )
        return found

    def bold(self, font: str) -> bool:
        return self._of(font)[0]

    def italic(self, font: str) -> bool:
        return self._of(font)[1]

    def monospace(self, font: str) -> bool:
        return self._of(font)[2]


def unrotated_rect(page: pymupdf.Page) -> pymupdf.Rect:
    """The page rect in the unrotated text space ``rawdict`` reports."""
    box = page.cropbox
    return pymupdf.Rect(0, 0, box.width, box.height)


def _page_blocks(page: pymupdf.Page, name: str) -> list[list[Line]]:
    """The page's text blocks as cleaned lines (empty blocks left out), after its
    character count is checked (``pdf_guard.page_textpage``). The lines are read by the
    compiled reader when it is built (``core.native.stext``), else from rawdict:
    the same values either way."""
    rect = unrotated_rect(page)
    textpage = pdf_guard.page_textpage(page, RAWDICT_FLAGS, name)
    if stext_native.available():
        blocks = [clean_lines(b, rect) for b in stext_native.page_lines(textpage)]
    else:
        raw = page.get_text("rawdict", flags=RAWDICT_FLAGS, textpage=textpage)
        blocks = [block_lines(b, rect) for b in raw["blocks"] if b.get("type") == 0]
    return [lines for lines in blocks if lines]


def _ocr_blocks(page: pymupdf.Page, doc_sha256: str, name: str) -> list[list[Line]]:
    """The page's paragraphs read by OCR (``core.ingest.ocr``) as cleaned lines, each
    with its confidence (empty paragraphs left out)."""
    rect = unrotated_rect(page)
    blocks = []
    for paragraph in ocr.recognise_page(page, doc_sha256, name):
        lines = []
        for parts, confidence in paragraph:
            line = clean_line(parts, rect)
            if line is not None:
                line.confidence = confidence
                lines.append(line)
        if lines:
            blocks.append(lines)
    return blocks


def _add_page(
    builder: _Builder,
    page: pymupdf.Page,
    blocks: list[list[Line]],
    doc_sha256: str,
    rotation: pymupdf.Matrix,
    *,
    find_tables: bool,
) -> None:
    """Append the page's ``blocks`` (cleaned lines) in reading order, its tables (when
    ``find_tables``) read row by row."""
    regions = (
        _page_tables(page, doc_sha256, blocks, builder.tables, rotation) if find_tables else ()
    )
    table_lines: list[list[Line]] = [[] for _ in regions]
    units: list[list[Line]] = []
    for lines in blocks:
        rest = take_table_lines(lines, regions, table_lines) if regions else lines
        if rest:
            units.append(merge_baselines(rest))
    tables = [rows for rows in map(table_rows, table_lines) if rows]
    boxes = [bounding([ln.bbox for ln in unit]) for unit in units]
    boxes += [bounding([ln.bbox for row in rows for ln in row]) for rows in tables]
    number = page.number + 1
    ordered: list[list[Line] | list[list[Line]]] = []
    for k in reading_order(boxes):
        if k >= len(units):
            ordered.append(tables[k - len(units)])
        elif ordered and _continues(ordered[-1], units[k]):
            ordered[-1] = [*ordered[-1], *units[k]]
        else:
            ordered.append(units[k])
    for block_no, unit in enumerate(ordered):
        if builder.pos:
            builder.insert("\n\n")
        if isinstance(unit[0], Line):
            _emit_block(builder, unit, number, block_no)
        else:
            _emit_table(builder, unit, number, block_no)


def _page_tables(
    page: pymupdf.Page,
    doc_sha256: str,
    blocks: list[list[Line]],
    budget: TableBudget | None,
    rotation: pymupdf.Matrix,
) -> tuple[TableRegion, ...]:
    """The table regions of a page from its cleaned lines (``table_regions``)."""
    worded = [ln.bbox for lines in blocks for ln in lines if _WORD.search(ln.text)]
    fragments = grid_fragments(blocks)
    chars = lambda: visible_char_boxes(blocks)  # noqa: E731 - asked for only when searched
    return table_regions(page, doc_sha256, worded, fragments, budget, chars, rotation=rotation)


def page_table_regions(
    page: pymupdf.Page, doc_sha256: str, budget: TableBudget | None = None
) -> tuple[TableRegion, ...]:
    """The table regions ``build_canonical_text`` finds on ``page`` (of the document
    ``doc_sha256``, rotation normalised), from the same cleaned lines; cached as it
    caches them. For a parse whose document's regions left the cache. A damaged page
    is ``DamagedPdfError``."""
    with pdf_guard.mupdf_errors("the PDF"):
        blocks = _page_blocks(page, "the PDF")
        return _page_tables(page, doc_sha256, blocks, budget, page.rotation_matrix)


def _continues(previous: list, unit: list[Line]) -> bool:
    """A block that ends in a split word ("Interna-") continued by the next block right
    below it ("tional ...") is one block: layout analysis cut it mid-word."""
    if not previous or not isinstance(previous[-1], Line):
        return False
    last, first = previous[-1], unit[0]
    height = last.bbox[3] - last.bbox[1]
    below = 0 <= first.bbox[1] - last.bbox[3] + 0.5 * height <= 1.5 * height
    overlap = min(last.bbox[2], first.bbox[2]) - max(last.bbox[0], first.bbox[0])
    return below and overlap > 0 and hyphenated(last.text, first.text)


def _emit_block(builder: _Builder, lines: list[Line], page: int, block_no: int) -> None:
    """Lines joined by ``\\n``; a hyphenated word is joined without separator."""
    for i, line in enumerate(lines):
        text, boxes = line.text, line.boxes
        following = lines[i + 1].text if i + 1 < len(lines) else ""
        joined = bool(following) and hyphenated(text, following)
        if joined:
            text, boxes = text[:-1], boxes[:-1]
        start = builder.pos
        builder.add(text, boxes)
        builder.line_records.append(
            (start, builder.pos, page, block_no, line.font, line.size_pt, line.flags, line.bbox)
        )
        if line.confidence is not None and builder.pos > start:
            builder.ocr_records.append((start, builder.pos, page, line.confidence))
        if following and not joined:
            builder.insert("\n")


def _emit_table(builder: _Builder, rows: list[list[Line]], page: int, block_no: int) -> None:
    """One line per table row, cells separated by a tab, rows by ``\\n``."""
    for r, row in enumerate(rows):
        if r:
            builder.insert("\n")
        start = builder.pos
        for c, cell in enumerate(row):
            if c:
                builder.insert("\t")
            cell_start = builder.pos
            builder.add(cell.text, cell.boxes)
            if cell.confidence is not None:
                builder.ocr_records.append((cell_start, builder.pos, page, cell.confidence))
        main = max(row, key=lambda ln: len(ln.text))
        bbox = bounding([ln.bbox for ln in row])
        builder.line_records.append(
            (start, builder.pos, page, block_no, main.font, main.size_pt, main.flags, bbox)
        )
