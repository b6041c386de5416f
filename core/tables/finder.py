"""Table regions of PDF pages: ruled tables through PyMuPDF's table finder
(``core.tables.ruled``), borderless numeric tables through the cheap pass of
``core.tables.grids``.

The finder runs only where the cheap signals of ``core.tables.table_signals`` agree
(tabular text, rulings in both directions at three x positions or more, at most
``MAX_PAGE_CROSSINGS`` crossings), and while the document's pages so far have not spent
its ``MAX_DOCUMENT_TABLE_WORK`` (``TableBudget``; later pages are read without ruled
tables, so a file of many mesh pages ends in bounded time). Found tables whose cells are
mostly empty (the grid of a plot) are dropped; a table found on a page of two-fragment
rows (terms and definitions) must be ``MIN_TEXT_TABLE_WIDTH_SHARE`` of the page wide (a
diagram's ruled boxes are not tables). A ruled table's header row is its first row (of
three or more). Borderless tables (aligned figure columns, no vertical rulings:
financial statements) come from ``numeric_grids`` on the same line fragments, at no
PyMuPDF cost, with their header rows. Lines held by grids of two or more figure columns
are left out of the finder's signals (so a statement's page is not searched again); a
grid that overlaps a ruled table is dropped (the ruled table has cells). The regions are
cached by (document sha256, page index) because ingest (reading order keeps a table's
text together, row by row) and parse (the table block) both need them.

Coordinates: ``bbox_pt`` and cell boxes are in the page's unrotated text space (the
space of ``rawdict``), points, y downwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pymupdf

from core.bounded_cache import BoundedCache
from core.provenance.geometry import BBox, contains_centre, overlaps, union_of
from core.tables.grid_rows import Fragment
from core.tables.grids import numeric_grids
from core.tables.ruled import ruled_cells
from core.tables.table_signals import (  # the signals are part of this module's API
    MAX_DOCUMENT_TABLE_WORK,
    MAX_PAGE_CROSSINGS,
    count_crossings,
    looks_tabular,
    page_signals,
    rulings,
    table_work,
)

__all__ = [
    "MAX_DOCUMENT_TABLE_WORK",
    "MAX_PAGE_CROSSINGS",
    "TableBudget",
    "TableRegion",
    "cached_table_regions",
    "clear_table_cache",
    "count_crossings",
    "looks_tabular",
    "may_hold_table",
    "rulings",
    "table_regions",
    "table_work",
    "unrotated_width",
]

# A table found on a page whose text rows have two fragments (see ``page_signals``) is
# kept when it is at least this share of the page wide (the terms of a 10-Q and the
# lists of two releases span 60-93 %; the class boxes of a UML diagram 18 %).
MIN_TEXT_TABLE_WIDTH_SHARE = 0.4
# Share of a table's cells that must hold text.
MIN_FILLED_SHARE = 0.5
_CELL_BLOCK = 256  # cells tested against the line centres at once (memory)
_CACHE_SIZE = 4096
# (sha256, page index) -> (regions, cost): thread-safe, the UI parses from several threads
_cache: BoundedCache[tuple[str, int], tuple[tuple[TableRegion, ...], int]] = BoundedCache(
    _CACHE_SIZE
)


@dataclass(slots=True)
class TableBudget:
    """What one document's pages have cost find_tables so far (crossings squared, in
    page order), so a document of many mesh pages ends in bounded time; the result of a
    page depends only on the file, never on the clock."""

    spent: int = 0

    def allows(self, crossings: int) -> bool:
        return self.spent + crossings * crossings <= MAX_DOCUMENT_TABLE_WORK


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRegion:
    """One table: its box and, per row, the boxes of its cells (``None`` for merged).

    ``text_bbox_pt`` and ``rows`` are in unrotated text space (the space of ``rawdict``);
    ``page_bbox_pt`` is the same box in the rendered page's space (they differ only on
    rotated pages), and so is
    ``header_page_bbox_pt``, the box of its header rows (``None``: none known). A
    borderless table (``ruled`` False) has no cells (``rows == ()``).
    """

    text_bbox_pt: BBox
    page_bbox_pt: BBox
    rows: tuple[tuple[BBox | None, ...], ...]
    header_page_bbox_pt: BBox | None = None
    ruled: bool = True

    def cell_of(self, box: BBox) -> tuple[int, int] | None:
        """(row, column) of the cell holding the centre of ``box``, else ``None``."""
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        for r, row in enumerate(self.rows):
            for c, cell in enumerate(row):
                if cell is not None and cell[0] <= cx <= cell[2] and cell[1] <= cy <= cell[3]:
                    return r, c
        return None

    def holds(self, box: BBox) -> bool:
        """Whether the centre of ``box`` (unrotated text space) lies in the table."""
        return contains_centre(self.text_bbox_pt, box)


def unrotated_width(page: pymupdf.Page) -> float:
    """The page's width in unrotated text space, points."""
    return float(page.cropbox.width)


def clear_table_cache() -> None:
    """Forget every page's regions (the benchmark times a first parse with it)."""
    _cache.clear()


def may_hold_table(page: pymupdf.Page, line_boxes: list[BBox]) -> bool:
    """The page passes ``table_work``'s signals."""
    return table_work(page, line_boxes) > 0


def cached_table_regions(
    doc_sha256: str, page_index: int, budget: TableBudget | None = None
) -> tuple[TableRegion, ...] | None:
    """The regions found for this page in this process, or ``None`` if not looked for
    (a hit charges ``budget`` what the page cost, as the first look did; the page's
    place in the cache's order is left alone)."""
    return _charged(_cache.peek((doc_sha256, page_index)), budget)


def _charged(
    found: tuple[tuple[TableRegion, ...], int] | None, budget: TableBudget | None
) -> tuple[TableRegion, ...] | None:
    """The regions of a cache entry, its cost charged to ``budget``; None for no entry."""
    if found is None:
        return None
    if budget is not None:
        budget.spent += found[1]
    return found[0]


def table_regions(
    page: pymupdf.Page,
    doc_sha256: str,
    line_boxes: list[BBox],
    fragments: list[Fragment],
    budget: TableBudget | None = None,
    char_boxes: Callable[[], Sequence[BBox] | np.ndarray] | None = None,
    *,
    rotation: pymupdf.Matrix,
) -> tuple[TableRegion, ...]:
    """Tables of one page (cached by document hash and page index).

    ``line_boxes`` (the boxes of the page's cleaned text lines that hold a word,
    unrotated space) feed the ruled-table signal, ``fragments`` (the lines cut for the
    grids, ``core.ingest.pdf_lines.grid_fragments``) the numeric grids; both come from
    ``core.ingest.pdf_text``, which reads every page the same way (a parse whose regions
    left the cache asks it through ``page_table_regions``). ``char_boxes`` gives the
    boxes of the page's visible characters, asked for only when the page is searched for
    ruled tables (``core.tables.ruled``: find_tables then extracts no text of its own).
    ``budget`` (one per document, pages in order) is charged the page's crossings
    squared; a page it cannot pay for is read without ruled tables (its numeric grids
    cost nothing and stay). ``rotation``: ``page.rotation_matrix``, which the caller read.
    """
    key = (doc_sha256, page.number)
    cached = _charged(_cache.get(key), budget)
    if cached is not None:
        return cached
    grids = _grid_regions(rotation, fragments)
    # Text that grids of several figure columns hold needs no find_tables; a one-column
    # grid is weaker evidence (a ruled register's counts), so its page is still searched.
    strong = [g.text_bbox_pt for g, columns in grids if columns >= 2]
    rest = (
        [box for box in line_boxes if not any(contains_centre(a, box) for a in strong)]
        if strong
        else line_boxes
    )
    crossings, per_row, paths = page_signals(page, rest)
    if crossings and budget is not None and not budget.allows(crossings):
        crossings = 0
    chars = char_boxes() if char_boxes and crossings else None
    ruled = _find(page, rest, chars, paths, rotation=rotation) if crossings else ()
    if per_row == 2:  # a table of terms spans the text column; a diagram's box does not
        width = MIN_TEXT_TABLE_WIDTH_SHARE * unrotated_width(page)
        ruled = tuple(r for r in ruled if r.text_bbox_pt[2] - r.text_bbox_pt[0] >= width)
    cost = crossings * crossings
    if budget is not None:
        budget.spent += cost
    regions = ruled + tuple(
        g for g, _ in grids if not any(overlaps(g.text_bbox_pt, r.text_bbox_pt) for r in ruled)
    )
    _cache.put(key, (regions, cost))
    return regions


def _find(
    page: pymupdf.Page,
    line_boxes: list[BBox],
    char_boxes: Sequence[BBox] | np.ndarray | None,
    paths: list[dict] | None = None,
    *,
    rotation: pymupdf.Matrix,
) -> tuple[TableRegion, ...]:
    """``find_tables`` regions with at least two rows and columns whose cells mostly
    hold text (a plot's grid has empty cells); ``paths``: the page's drawings, if read;
    ``rotation``: its ``rotation_matrix``."""
    found: list[TableRegion] = []
    for rows in ruled_cells(page, char_boxes, paths):
        rows = _drop_banner_rows(rows)
        if len(rows) < 2 or max(len([c for c in row if c]) for row in rows) < 2:
            continue
        if _filled_share(rows, line_boxes) < MIN_FILLED_SHARE:
            continue
        real = [cell for row in rows for cell in row if cell is not None]
        bbox = (
            min(c[0] for c in real),
            min(c[1] for c in real),
            max(c[2] for c in real),
            max(c[3] for c in real),
        )
        header = _header_box(rows)
        found.append(
            TableRegion(
                text_bbox_pt=bbox,
                page_bbox_pt=_shown(rotation, bbox),
                rows=tuple(rows),
                header_page_bbox_pt=_shown(rotation, header) if header else None,
            )
        )
    return tuple(found)


def _grid_regions(
    matrix: pymupdf.Matrix, fragments: list[Fragment]
) -> list[tuple[TableRegion, int]]:
    """Borderless numeric grids (``core.tables.grids``) as regions without cells, each
    with its number of figure columns (``matrix``: the page's ``rotation_matrix``)."""
    found: list[tuple[TableRegion, int]] = []
    for grid in numeric_grids(fragments):
        header = _shown(matrix, grid.header_bbox) if grid.header_bbox else None
        region = TableRegion(
            text_bbox_pt=grid.bbox,
            page_bbox_pt=_shown(matrix, grid.bbox),
            rows=(),
            header_page_bbox_pt=header,
            ruled=False,
        )
        found.append((region, grid.columns))
    return found


def _shown(matrix: pymupdf.Matrix, box: BBox) -> BBox:
    """An unrotated-space box in the rendered page's space (``matrix``: the page's
    ``rotation_matrix``)."""
    shown = pymupdf.Rect(box) * matrix
    return (float(shown.x0), float(shown.y0), float(shown.x1), float(shown.y1))


def _header_box(rows: list[tuple[BBox | None, ...]]) -> BBox | None:
    """The first row of a table of three rows or more: its column headings (asking
    ``find_tables`` for its header costs another 0.1 s a table)."""
    cells = [cell for cell in rows[0] if cell is not None] if len(rows) >= 3 else []
    return union_of(cells)


def _drop_banner_rows(rows: list[tuple[BBox | None, ...]]) -> list[tuple[BBox | None, ...]]:
    """Drop leading and trailing rows that are one cell across the whole table (a title
    drawn inside the table's frame, not a row of data)."""

    def banner(row: tuple[BBox | None, ...]) -> bool:
        return len(row) > 1 and sum(cell is not None for cell in row) == 1

    while rows and banner(rows[0]):
        rows = rows[1:]
    while rows and banner(rows[-1]):
        rows = rows[:-1]
    return rows


def _filled_share(rows: list[tuple[BBox | None, ...]], line_boxes: list[BBox]) -> float:
    """Share of the cells holding the centre of a line box (edges included), tested for
    ``_CELL_BLOCK`` cells at a time against every centre."""
    cells = np.asarray([cell for row in rows for cell in row if cell is not None], dtype=float)
    if not len(cells):
        return 0.0
    lines = np.asarray(line_boxes, dtype=float).reshape(-1, 4)
    cx, cy = (lines[:, 0] + lines[:, 2]) / 2, (lines[:, 1] + lines[:, 3]) / 2
    filled = 0
    for s in range(0, len(cells), _CELL_BLOCK):
        c = cells[s : s + _CELL_BLOCK, :, None]
        inside = (c[:, 0] <= cx) & (cx <= c[:, 2]) & (c[:, 1] <= cy) & (cy <= c[:, 3])
        filled += int(inside.any(axis=1).sum())
    return filled / len(cells)
