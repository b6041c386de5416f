"""The layout parser: PyMuPDF's layout model (``page.get_layout()``) mapped to blocks.

``get_layout()`` runs an offline ONNX model (about half a second a page on a CPU) and
leaves ``page.layout_information``: a list of ``[x0, y0, x1, y1, class]`` boxes in the
page's unrotated space, with classes ``text``, ``title``, ``section-header``,
``list-item``, ``table``, ``picture``, ``caption``, ``footnote``, ``formula``,
``page-header`` and ``page-footer``.

Each line of ``Document.lines`` goes to the box that covers most of it (at least half of
its area); consecutive lines in one box form a run typed by ``LAYOUT_KINDS``. Lines no
box covers are paragraphs. Text runs set in monospace become code (the model has no
code class), consecutive list items one list, and heading levels come from the same
rules as the fast parser (outline, numbering, font-size rank), without dropping any
heading the model found.

The model's time is bounded by the ``layout_s`` limit (``core.ingest.limits``), checked
before each page; its MuPDF errors become typed one-line errors.

``parse_pdf_mixed`` (the ``fast+layout`` parser) runs the model only on the pages
``model_pages`` picks and takes only its tables from it: 0.27 s a page on the shared
filings against the fast parser's few milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pymupdf

from core.errors import LimitExceededError
from core.ingest import limits
from core.ingest.pdf_guard import mupdf_errors, normalise_rotation
from core.parse.headings import OutlineIndex
from core.parse.heuristic import (
    Run,
    heading_candidate,
    is_code,
    merge_adjacent,
    pdf_runs,
    run_block,
    set_heading_levels,
)
from core.provenance.types import BBox, Block, Document, TextLine

LAYOUT_KINDS: dict[str, str] = {
    "text": "paragraph",
    "footnote": "paragraph",
    "formula": "paragraph",
    "picture": "paragraph",
    "title": "heading",
    "section-header": "heading",
    "list-item": "list",
    "table": "table",
    "caption": "caption",
    "page-header": "header",
    "page-footer": "footer",
}
_MIN_COVER = 0.5

Region = tuple[BBox, str]


def parse_pdf_layout(
    doc: Document, progress: Callable[[int, int], None] | None = None
) -> list[Block | None]:
    """Typed blocks of a PDF from the layout model (see the module docstring);
    ``progress(done, total)`` after each page the model has read."""
    if not doc.lines or doc.pdf_bytes is None:
        return []
    regions = layout_regions(doc, progress)
    outline = OutlineIndex(doc.outline)
    runs: list[Run] = []
    current: tuple[int, int] | None = None
    for index, line in enumerate(doc.lines):
        page_regions = regions.get(line.page, [])
        slot = best_region(line, page_regions)
        key = (line.page, slot)
        if runs and key == current and slot >= 0:
            runs[-1].lines.append(index)
            continue
        kind = LAYOUT_KINDS.get(page_regions[slot][1], "paragraph") if slot >= 0 else "paragraph"
        runs.append(Run(kind, [index]))
        current = key
    for run in runs:
        _refine(doc, run, outline)
    set_heading_levels(doc, runs, trust_outline=False)
    return [run_block(doc, run) for run in merge_adjacent(runs, doc.lines)]


def _refine(doc: Document, run: Run, outline: OutlineIndex) -> None:
    lines = [doc.lines[i] for i in run.lines]
    if run.kind == "paragraph" and is_code(lines):
        run.kind = "code"
    elif run.kind == "heading":
        text = doc.text[lines[0].char_start : lines[-1].char_end]
        top = lines[0].bbox_pt[1] if lines[0].bbox_pt else None
        level = outline.level_of(text, lines[0].page, top) if outline else 0
        run.candidate = heading_candidate(doc, run.lines, level)


def layout_regions(
    doc: Document,
    progress: Callable[[int, int], None] | None = None,
    pages: Sequence[int] | None = None,
) -> dict[int, list[Region]]:
    """Layout boxes ``(bbox_pt, class)`` per 1-based page with text, moved to the rendered
    page's space (points, origin top left); pages without text are absent. ``pages``
    (1-based) limits the model to those pages."""
    pdf = pymupdf.open(stream=doc.pdf_bytes, filetype="pdf")
    out: dict[int, list[Region]] = {}
    deadline = LayoutDeadline(doc.doc_id)
    wanted = doc.pages if pages is None else [doc.pages[n - 1] for n in pages]
    for done, page_info in enumerate(wanted):
        if progress is not None:
            progress(done, len(wanted))
        if not page_info.has_text:
            continue
        deadline.check(page_info.number)
        page = normalise_rotation(pdf, pdf[page_info.number - 1])
        with mupdf_errors(doc.doc_id):
            page.get_layout()
        matrix = page.rotation_matrix
        regions: list[Region] = []
        found: list[tuple[float, float, float, float, str]] = page.layout_information or []
        for x0, y0, x1, y1, cls in found:
            r = pymupdf.Rect(x0, y0, x1, y1) * matrix
            regions.append(((r.x0, r.y0, r.x1, r.y1), str(cls)))
        out[page_info.number] = regions
    return out


class LayoutDeadline:
    """The ``layout_s`` limit of ``core.ingest.limits``, checked before each page."""

    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id
        self.started = time.perf_counter()
        self.limit_s = limits.value("layout_s")

    def check(self, page: int) -> None:
        elapsed = time.perf_counter() - self.started
        if elapsed > self.limit_s:
            spec = limits.LIMITS["layout_s"]
            raise LimitExceededError(
                f"the layout model spent {elapsed:.0f} s on {self.doc_id} before page {page}, "
                f"over the limit of {self.limit_s:g} s; use the fast parser, or "
                f"{spec.how_to_raise()}"
            )


def best_region(line: TextLine, regions: Sequence[Region]) -> int:
    """Index of the region covering most of the line (at least half), else -1."""
    if line.bbox_pt is None or not regions:
        return -1
    x0, y0, x1, y1 = line.bbox_pt
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    best, best_cover = -1, _MIN_COVER
    for k, ((rx0, ry0, rx1, ry1), _) in enumerate(regions):
        w = min(x1, rx1) - max(x0, rx0)
        h = min(y1, ry1) - max(y0, ry0)
        if w <= 0 or h <= 0:
            continue
        cover = w * h / area
        if cover > best_cover:
            best, best_cover = k, cover
    return best


# -- the fast parser, with the layout model on the pages where it pays ---------------------
MIN_COLUMN_ROWS = 4
_ROW_STEP_PT = 3.0
_EDGE_STEP_PT = 4.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUse:
    """Where the mixed parser ran the layout model (1-based pages) and its seconds."""

    pages: tuple[int, ...]
    elapsed_s: float


def parse_pdf_mixed(
    doc: Document, progress: Callable[[int, int], None] | None = None
) -> tuple[list[Block | None], ModelUse]:
    """The fast parser's blocks, with the layout model's tables on the pages where the
    fast pass leaves column-aligned text that no table explains (``model_pages``): runs
    of lines the model puts in one table box become one table block."""
    runs = pdf_runs(doc)
    pages = model_pages(doc, runs) if doc.pdf_bytes is not None else []
    started = time.perf_counter()
    regions = layout_regions(doc, progress, pages=pages) if pages else {}
    use = ModelUse(pages=tuple(pages), elapsed_s=time.perf_counter() - started)
    for page, page_regions in regions.items():
        for box, cls in page_regions:
            if cls == "table":
                runs = _as_table(doc, runs, page, box)
    return [run_block(doc, run) for run in runs], use


def model_pages(doc: Document, runs: Sequence[Run]) -> list[int]:
    """Pages whose lines outside tables and furniture line up in columns: at least
    ``MIN_COLUMN_ROWS`` printed rows of two or more lines whose second (or later) lines
    start at one shared left edge (a glossary, a list of releases, a table without
    figures). Two-column prose qualifies too; the model then simply finds no table."""
    boxes: dict[int, list[BBox]] = {}
    for run in runs:
        if run.kind in ("table", "header", "footer"):
            continue
        for index in run.lines:
            line = doc.lines[index]
            if line.bbox_pt is not None:
                boxes.setdefault(line.page, []).append(line.bbox_pt)
    return sorted(page for page, page_boxes in boxes.items() if _columnar(page_boxes))


def _columnar(boxes: list[BBox]) -> bool:
    """At least ``MIN_COLUMN_ROWS`` rows (3 pt baseline steps) of two or more lines whose
    later lines start at a shared left edge (4 pt steps)."""
    rows: dict[int, list[BBox]] = {}
    for box in boxes:
        rows.setdefault(int(box[3] // _ROW_STEP_PT), []).append(box)
    edges: dict[int, int] = {}
    for row in rows.values():
        for edge in {int(b[0] // _EDGE_STEP_PT) for b in sorted(row)[1:]}:
            edges[edge] = edges.get(edge, 0) + 1
    return any(n >= MIN_COLUMN_ROWS for n in edges.values())


def _as_table(doc: Document, runs: list[Run], page: int, box: BBox) -> list[Run]:
    """``runs`` with every maximal stretch of consecutive runs on ``page`` whose lines the
    table ``box`` covers (``best_region``) joined into one table run; a stretch needs two
    lines or more, and furniture or a table already found is never joined."""
    out: list[Run] = []
    stretch: list[Run] = []

    def close() -> None:
        lines = [i for run in stretch for i in run.lines]
        if len(lines) >= 2:
            out.append(Run("table", lines))
        else:
            out.extend(stretch)
        stretch.clear()

    for run in runs:
        first = doc.lines[run.lines[0]]
        inside = (
            first.page == page
            and run.kind not in ("header", "footer", "table")
            and all(best_region(doc.lines[i], [(box, "table")]) == 0 for i in run.lines)
        )
        if inside:
            stretch.append(run)
            continue
        if stretch:
            close()
        out.append(run)
    if stretch:
        close()
    return out
