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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pymupdf

from core.parse.headings import OutlineIndex
from core.parse.heuristic import (
    Run,
    heading_candidate,
    is_code,
    merge_adjacent,
    run_block,
    set_heading_levels,
)
from core.types import BBox, Block, Document, TextLine

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
    doc: Document, progress: Callable[[int, int], None] | None = None
) -> dict[int, list[Region]]:
    """Layout boxes ``(bbox_pt, class)`` per 1-based page with text, moved to the rendered
    page's space (points, origin top left); pages without text are absent."""
    pdf = pymupdf.open(stream=doc.pdf_bytes, filetype="pdf")
    out: dict[int, list[Region]] = {}
    for done, page_info in enumerate(doc.pages):
        if progress is not None:
            progress(done, len(doc.pages))
        if not page_info.has_text:
            continue
        page = pdf[page_info.number - 1]
        page.get_layout()
        matrix = page.rotation_matrix
        regions: list[Region] = []
        for x0, y0, x1, y1, cls in page.layout_information or ():
            r = pymupdf.Rect(x0, y0, x1, y1) * matrix
            regions.append(((r.x0, r.y0, r.x1, r.y1), str(cls)))
        out[page_info.number] = regions
    return out


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
