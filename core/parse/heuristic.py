"""The fast PDF parser: typed blocks from the laid-out lines of ``Document.lines``.

Lines that ingest put in one layout block (same page and ``source_block``; contiguous
in the text) form a *unit*. Each unit is cut into runs and typed:

* header / footer: furniture lines (``core.parse.furniture``) are runs of their own;
* table: the unit ingest read as a table region (its box lies in the region); its
  leading rows inside the region's header box are the block's ``header_rows``;
* code: at least ``CODE_SHARE`` of its characters in monospace fonts;
* caption: it starts like "Figure 3:", "Fig. 2.", "Table 1", "Listing 4", "Abbildung 5";
* heading: up to three leading lines that look like a heading and differ in style from
  the line after them (``core.parse.headings``, which also sets the levels);
* list: from the first line that starts like an item (bullet, "1.", "a)", "(iv)") on,
  each item with its continuation lines, when the unit starts with an item or holds two
  or more; consecutive list runs form one list block;
* paragraph: the rest.

A block's page is its first line's page; its box is the union of its lines' boxes on
that page (page space, points).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from core.ingest.pdf_guard import normalise_rotation
from core.ingest.pdf_text import page_table_regions
from core.parse.blocks import lines_bbox, make_block
from core.parse.furniture import furniture_lines
from core.parse.headings import (
    COVER_MIN_HEADINGS,
    RICH_OUTLINE,
    HeadingCandidate,
    OutlineIndex,
    assign_levels,
    body_size,
    cover_page_keep,
    is_toc_entry,
    looks_like_heading,
    numbering_depth,
)
from core.provenance.geometry import contains_centre
from core.provenance.types import BBox, Block, Document, TextLine
from core.tables.finder import TableBudget, cached_table_regions

CODE_SHARE = 0.8
OUTLINE_SHARE = 0.5
_CAPTION = re.compile(
    r"^(figure|fig\.|table|tab\.|listing|algorithm|chart|exhibit|abbildung|abb\.|tabelle)"
    r"\s*[\dIVX]+[A-Za-z]?(\.\d+)*\s*[.:—–-]?",
    re.I,
)
_ITEM = re.compile(
    r"^([•◦▪‣●○■□►▸▪∙·]\s*\S|[-–*]\s+\S|\d{1,3}[.)]\s+\S|[a-z][.)]\s+\S|\([a-z0-9]{1,4}\)\s*\S)"
)
_MERGING_KINDS = ("list", "code")


@dataclass(slots=True)
class Run:
    """Consecutive lines (indices into ``Document.lines``) that become one block."""

    kind: str
    lines: list[int]
    candidate: HeadingCandidate | None = None
    level: int = 0
    header: int = 0  # a table's leading lines that are its header rows


def parse_pdf(doc: Document) -> list[Block | None]:
    """Typed blocks of a PDF ``Document`` (see the module docstring)."""
    return [run_block(doc, run) for run in pdf_runs(doc)]


def pdf_runs(doc: Document) -> list[Run]:
    """The typed, merged runs ``parse_pdf`` makes blocks of (``[]`` without lines)."""
    lines = doc.lines
    if not lines:
        return []
    context = _Context(doc)
    runs = [run for unit in units(lines) for run in _unit_runs(context, unit)]
    _drop_cover_headings(doc, runs)
    set_heading_levels(doc, runs, trust_outline=True)
    return merge_adjacent(runs, lines)


def set_heading_levels(doc: Document, runs: list[Run], *, trust_outline: bool) -> None:
    """Levels for the heading runs (``core.parse.headings``); a heading the rules drop
    becomes a paragraph. ``trust_outline`` lets a rich outline drop unlisted headings,
    if the runs found at least ``OUTLINE_SHARE`` of its entries (slides list sections
    that never appear as headings on the page)."""
    heading_runs = [run for run in runs if run.kind == "heading"]
    candidates = [run.candidate for run in heading_runs]
    listed = sum(1 for c in candidates if c is not None and c.outline_level)
    rich = len(doc.outline) >= RICH_OUTLINE and listed >= OUTLINE_SHARE * len(doc.outline)
    levels = assign_levels(
        candidates,  # type: ignore[arg-type]
        outline_rich=trust_outline and rich,
        title=doc.title,
    )
    for run, level in zip(heading_runs, levels, strict=True):
        run.level = level
        if not level:
            run.kind = "paragraph"


def _drop_cover_headings(doc: Document, runs: list[Run]) -> None:
    """Heading runs of a page that is mostly headings become paragraphs, but for the
    largest (``core.parse.headings.cover_page_keep``)."""
    heading_runs = [run for run in runs if run.kind == "heading" and run.candidate is not None]
    if len(heading_runs) < COVER_MIN_HEADINGS:
        return
    page_runs: dict[int, int] = {}
    for run in runs:
        if run.kind not in ("header", "footer"):
            page = doc.lines[run.lines[0]].page
            page_runs[page] = page_runs.get(page, 0) + 1
    body = [run for run in runs if run.kind not in ("header", "footer")]
    after = {id(a): b.kind != "heading" for a, b in zip(body, body[1:], strict=False)}
    followed = [after.get(id(run), False) for run in heading_runs]
    candidates = [run.candidate for run in heading_runs]
    keep = cover_page_keep(candidates, page_runs, followed)  # type: ignore[arg-type]
    for run, kept in zip(heading_runs, keep, strict=True):
        if not kept:
            run.kind, run.candidate = "paragraph", None


def heading_candidate(
    doc: Document, indices: Sequence[int], outline_level: int
) -> HeadingCandidate:
    lines = [doc.lines[i] for i in indices]
    text = doc.text[lines[0].char_start : lines[-1].char_end]
    return HeadingCandidate(
        text=" ".join(text.split()),
        page=lines[0].page,
        size_pt=max(ln.size_pt for ln in lines),
        bold=all(ln.bold for ln in lines),
        outline_level=outline_level,
    )


def is_code(lines: Sequence[TextLine]) -> bool:
    """At least ``CODE_SHARE`` of the characters are in monospace fonts."""
    mono = sum(ln.char_end - ln.char_start for ln in lines if ln.monospace)
    return mono >= CODE_SHARE * sum(ln.char_end - ln.char_start for ln in lines)


class _Context:
    """What typing a unit needs to know about the whole document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.tables = _table_boxes(doc)
        # Figures of tables set in small type can outweigh the prose of a filing.
        prose = [ln for ln in doc.lines if _table_at(self, ln.page, ln.bbox_pt) is None]
        self.body_pt = body_size(prose or doc.lines)
        self.furniture = furniture_lines(doc)
        self.outline = OutlineIndex(doc.outline)

    def text(self, indices: Sequence[int]) -> str:
        lines = self.doc.lines
        return self.doc.text[lines[indices[0]].char_start : lines[indices[-1]].char_end]


def _table_boxes(doc: Document) -> dict[int, list[tuple[BBox, BBox | None]]]:
    """Page-space boxes of the tables ingest found and of their header rows, by 1-based
    page."""
    out: dict[int, list[tuple[BBox, BBox | None]]] = {}
    pdf = None
    budget = TableBudget()  # charged page by page, as ingest charged it
    for page in doc.pages:
        if page.read_by_ocr:  # ingest reads an OCR'd page without the table finder
            continue
        regions = cached_table_regions(doc.sha256, page.number - 1, budget)
        if regions is None and page.has_text and doc.pdf_bytes is not None:
            if pdf is None:
                import pymupdf

                pdf = pymupdf.open(stream=doc.pdf_bytes, filetype="pdf")
            page_obj = normalise_rotation(pdf, pdf[page.number - 1])
            regions = page_table_regions(page_obj, doc.sha256, budget)
        if regions:
            out[page.number] = [(r.page_bbox_pt, r.header_page_bbox_pt) for r in regions]
    return out


def units(lines: Sequence[TextLine]) -> Iterator[list[int]]:
    unit: list[int] = []
    for index, line in enumerate(lines):
        if unit:
            first = lines[unit[0]]
            if line.page != first.page or line.source_block != first.source_block:
                yield unit
                unit = []
        unit.append(index)
    if unit:
        yield unit


def _unit_runs(context: _Context, unit: list[int]) -> list[Run]:
    """Runs of one unit: a table unit whole, else cut at furniture, then typed."""
    if _in_table(context, [context.doc.lines[i] for i in unit]):
        return [Run("table", unit, header=_header_lines(context, unit))]
    runs: list[Run] = []
    part: list[int] = []
    part_kind: str | None = None
    for index in unit:
        kind = context.furniture.get(index)
        if part and kind != part_kind:
            runs.extend(_typed_runs(context, part, part_kind))
            part = []
        part.append(index)
        part_kind = kind
    if part:
        runs.extend(_typed_runs(context, part, part_kind))
    return runs


def _typed_runs(context: _Context, part: list[int], furniture: str | None) -> list[Run]:
    if furniture is not None:
        return [Run(furniture, part)]
    lines = [context.doc.lines[i] for i in part]
    if is_code(lines):
        return [Run("code", part)]
    if _CAPTION.match(context.text(part[:1])):
        return [Run("caption", part)]
    heading = _leading_heading(context, part)
    if heading is not None:
        rest = part[len(heading.lines) :]
        return [heading, *(_list_or_paragraph(context, rest) if rest else [])]
    return _list_or_paragraph(context, part)


def _table_of(context: _Context, lines: list[TextLine]) -> tuple[BBox, BBox | None] | None:
    """The (table box, header box) of the table holding the centre of these lines."""
    return _table_at(context, lines[0].page, lines_bbox(lines))


def _table_at(context: _Context, page: int, bbox: BBox | None) -> tuple[BBox, BBox | None] | None:
    """The (table box, header box) of the table on ``page`` holding the centre of ``bbox``."""
    tables = context.tables.get(page)
    if not tables or bbox is None:
        return None
    for table in tables:
        if contains_centre(table[0], bbox):
            return table
    return None


def _in_table(context: _Context, lines: list[TextLine]) -> bool:
    return _table_of(context, lines) is not None


def _header_lines(context: _Context, unit: list[int]) -> int:
    """How many leading rows of a table unit lie in its table's header box (0 when the
    header would be the whole table)."""
    lines = [context.doc.lines[i] for i in unit]
    table = _table_of(context, lines)
    if table is None or table[1] is None:
        return 0
    count = 0
    for line in lines:
        if line.bbox_pt is None or not contains_centre(table[1], line.bbox_pt):
            break
        count += 1
    return count if count < len(lines) else 0


def _leading_heading(context: _Context, part: list[int]) -> Run | None:
    """The longest prefix (up to three lines) that is a heading, as a run."""
    lines = context.doc.lines
    limit = 1
    while limit < min(3, len(part)) and not numbering_depth(context.text(part[limit : limit + 1])):
        limit += 1
    for k in range(limit, 0, -1):
        head = part[:k]
        if k < len(part) and _same_style(lines[head[-1]], lines[part[k]]):
            continue
        text = context.text(head)
        page = lines[head[0]].page
        head_lines = [lines[i] for i in head]
        top = head_lines[0].bbox_pt[1] if head_lines[0].bbox_pt else None
        if is_toc_entry(text):
            return None
        outline_level = context.outline.level_of(text, page, top) if context.outline else 0
        if outline_level or looks_like_heading(text, head_lines, context.body_pt):
            return Run("heading", head, heading_candidate(context.doc, head, outline_level))
    return None


def _same_style(a: TextLine, b: TextLine) -> bool:
    return abs(a.size_pt - b.size_pt) < 0.5 and a.bold == b.bold


def _list_or_paragraph(context: _Context, part: list[int]) -> list[Run]:
    starts = [i for i, index in enumerate(part) if _ITEM.match(context.text([index]))]
    if not starts or (starts[0] > 0 and len(starts) < 2):
        return [Run("paragraph", part)]
    runs: list[Run] = []
    if starts[0] > 0:
        runs.append(Run("paragraph", part[: starts[0]]))
    runs.append(Run("list", part[starts[0] :]))
    return runs


def merge_adjacent(runs: list[Run], lines: Sequence[TextLine]) -> list[Run]:
    """Consecutive list runs form one list; consecutive code runs on one page one code."""
    out: list[Run] = []
    for run in runs:
        if out and run.kind == out[-1].kind and run.kind in _MERGING_KINDS:
            prev = out[-1]
            same_page = lines[prev.lines[-1]].page == lines[run.lines[0]].page
            if run.kind == "list" or same_page:
                prev.lines.extend(run.lines)
                continue
        out.append(run)
    return out


def run_block(doc: Document, run: Run) -> Block | None:
    lines = [doc.lines[i] for i in run.lines]
    header = lines[: run.header] if run.kind == "table" else []
    return make_block(
        doc,
        run.kind,  # type: ignore[arg-type]
        lines[0].char_start,
        lines[-1].char_end,
        page=lines[0].page,
        bbox=lines_bbox(lines),
        level=run.level,
        header_rows=tuple((ln.char_start, ln.char_end) for ln in header),
    )
