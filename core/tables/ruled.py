"""Ruled tables through PyMuPDF's table finder, fed the characters ingest already has.

``page.find_tables()`` spends about four fifths of its time building its own character
list (a second text extraction of the page and a Python loop that wraps every glyph in
``Rect``/``Point``/``Matrix`` objects: 0.1-0.2 s on a dense register page, 10-20x the
page's ``rawdict``), and most of the rest in three quadratic steps. Its ``lines``
strategy reads only where the characters are: a candidate region of rulings is kept when
a character lies inside it (``make_edges``) and a group of cells when a character
overlaps it (``cells_to_tables``). ``ruled_cells`` runs the same steps with the same
settings as ``find_tables(use_layout=False)``: ``make_edges`` and the edge merging of
``TableFinder.get_edges`` (``core.tables.ruled_edges``, tested equal to the table
module's records) from the drawings the table signals read already, then
intersections, cells and tables by the same rules in near-linear time (tested equal to
the table module's own functions), on a character list built with plain arithmetic
from the character boxes ingest extracted already, so the page's text and drawings are
read once and no table-module state is touched. A rotated page, or a page without its
character boxes, goes through ``find_tables`` itself.

Our character boxes are the font's line height, find_tables' the glyphs' ink, so a
candidate region that holds a character only by a sliver can go either way: over the
corpus PDFs the tables kept by ``core.tables.finder`` (and every canonical text) came
out the same; the raw finder's edges differed on 7 of 357 pages, by 0.01 pt, or by a
table of one or two rows.

The steps follow the pinned PyMuPDF's table module (its settings and defaults are read
from it); when those names are missing the public ``find_tables`` is used.

Coordinates: character and cell boxes are in the page's unrotated text space (the space
of ``rawdict``), points, y downwards.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pymupdf

from core.native import stext as stext_native
from core.provenance.geometry import BBox
from core.tables.ruled_edges import drawing_edges, merged_edges, text_boxes

try:  # the pinned PyMuPDF's table module; a later one may rename its internals
    from pymupdf import table as _table

    _INTERNALS = all(
        hasattr(_table, name)
        for name in ("TableSettings", "UNSET", "DEFAULT_SNAP_TOLERANCE", "DEFAULT_JOIN_TOLERANCE")
    )
except ImportError:  # pragma: no cover - the pinned version has it
    _INTERNALS = False

Row = tuple[BBox | None, ...]
CharArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Cell = tuple[float, float, float, float]
# Share of a character's box height cut from its top and from its bottom to approximate
# its ink (see ``_chars``): over the 156 pages of J&J, MGM and GeoTopo this made 7 pages'
# tables differ from find_tables' (in 0.01 pt of an edge, or a table of one or two
# rows), against 10 with the full box.
INK_BAND_SHARE = 0.3
_SLACK = 1e-6  # the bisected range is widened by this; the exact test decides
_BOX_OF = itemgetter("x0", "top", "x1", "bottom")  # the table module's bbox_getter


def ruled_cells(
    page: pymupdf.Page,
    char_boxes: Sequence[BBox] | np.ndarray | None,
    paths: list[dict] | None = None,
) -> list[list[Row]]:
    """Per table that ``find_tables(use_layout=False)`` finds on ``page``, its rows of cell
    boxes (``None`` for a merged cell). ``char_boxes``: the boxes of the page's visible
    (non-whitespace) characters in unrotated text space; ``None`` lets ``find_tables``
    extract them itself. ``paths``: ``page.get_cdrawings()`` when the caller read them."""
    matrix = page.transformation_matrix
    if char_boxes is None or page.rotation != 0 or matrix.b or matrix.c or not _INTERNALS:
        found = page.find_tables(use_layout=False)
        return [_rows(table) for table in found.tables] if found else []
    return _finder(page, char_boxes, page.get_cdrawings() if paths is None else paths)


def _finder(
    page: pymupdf.Page, char_boxes: Sequence[BBox] | np.ndarray, paths: list[dict]
) -> list[list[Row]]:
    """``find_tables``' lines-strategy steps over our characters and drawings (see the
    module docstring)."""
    settings = _table.TableSettings.resolve(settings=_settings())
    boxes = np.asarray(char_boxes, dtype=np.float64).reshape(-1, 4)
    snap = (settings.snap_x_tolerance, settings.snap_y_tolerance)
    holds_char = _CharTest(char_arrays(page, boxes))
    rect = tuple(page.rect)
    joined = text_boxes(paths, snap, holds_char)
    cells = stext_native.ruled_cells(  # edges, merged edges and cells in one compiled call
        list(paths),
        joined,
        rect,
        (
            *snap,
            settings.join_x_tolerance,
            settings.join_y_tolerance,
            settings.edge_min_length,
            settings.intersection_x_tolerance,
            settings.intersection_y_tolerance,
            _SLACK,
        ),
    )
    if cells is None:
        edges = drawing_edges(paths, rect, page.number, snap, settings.edge_min_length, joined)
        cells = _edge_cells(edges, settings)
    return [_cells_to_rows(group) for group in _groups(cells, boxes)]


class _CharTest:
    """``pymupdf.table.chars_in_rect`` (a character wholly inside the rectangle) over
    arrays built once, vectorised, instead of a Python loop over every character for
    every joined drawing."""

    def __init__(self, arrays: CharArrays):
        self.x0, self.y0, self.x1, self.y1 = arrays

    def __call__(self, rect: Sequence[float]) -> bool:
        inside = (rect[0] <= self.x0) & (self.x1 <= rect[2])
        inside &= (rect[1] <= self.y0) & (rect[3] >= self.y1)
        return bool(inside.any())


def _edge_cells(edges: list[dict], settings: Any) -> list[Cell]:
    """The cells of what ``TableFinder(page, settings)`` makes of the page's edge
    records: its edges (``merged_edges``), then two of its three quadratic steps done in
    near-linear time with the same result: the intersections (every vertical edge
    against every horizontal one) and the cells (for every intersection, the points
    below and right of it found by scanning all later points). The third, the tables
    (cells grouped by shared corners, a list scanned and shrunk until no cell joins), is
    ``_groups``."""
    merged = merged_edges(
        edges,
        (settings.snap_x_tolerance, settings.snap_y_tolerance),
        (settings.join_x_tolerance, settings.join_y_tolerance),
        settings.edge_min_length,
    )
    tol = (settings.intersection_x_tolerance, settings.intersection_y_tolerance)
    return _cell_boxes(merged, *tol)


def _cell_boxes(edges: list[dict], tol_x: float, tol_y: float) -> list[Cell]:
    """``_cells(_intersections(edges, tol_x, tol_y))``, by the compiled module when it is
    built (the same loops over the same sorted edges and float operations, the edge sets
    of two points compared by numbered boxes; tested equal), else by those two steps."""
    vertical = sorted((e for e in edges if e["orientation"] == "v"), key=_by_x_top)
    horizontal = sorted((e for e in edges if e["orientation"] == "h"), key=_by_top_x)
    found = stext_native.table_cells(
        [(e["x0"], e["top"], e["bottom"]) for e in vertical],
        [(e["top"], e["x0"], e["x1"]) for e in horizontal],
        (_box_numbers(vertical), _box_numbers(horizontal)),
        (tol_x, tol_y, _SLACK),
    )
    return found if found is not None else _cells(_intersections(edges, tol_x, tol_y))


def _box_numbers(edges: list[dict]) -> list[int]:
    """One number per edge, equal for edges with equal boxes (``_cells`` compares the
    edges through two points by their boxes)."""
    numbers: dict[tuple, int] = {}
    return [numbers.setdefault(_BOX_OF(e), len(numbers)) for e in edges]


def _groups(cells: list[Cell], chars: Sequence[BBox] | np.ndarray) -> list[list[Cell]]:
    """``cells_to_tables``: cells that share a corner, transitively, form a table; a
    table needs two distinct left and right cell edges and a character overlapping its
    box; tables sorted by their top-left cell."""
    chars = np.asarray(chars, dtype=np.float64).reshape(-1, 4)
    by_corner: dict[tuple[float, float], list[int]] = {}
    for k, cell in enumerate(cells):
        for corner in _corners(cell):
            by_corner.setdefault(corner, []).append(k)
    seen = [False] * len(cells)
    tables: list[list[Cell]] = []
    for first in range(len(cells)):
        if seen[first]:
            continue
        seen[first], stack, group = True, [first], []
        while stack:
            k = stack.pop()
            group.append(cells[k])
            for corner in _corners(cells[k]):
                for other in by_corner[corner]:
                    if not seen[other]:
                        seen[other] = True
                        stack.append(other)
        columns = len({c[0] for c in group}) >= 2 and len({c[2] for c in group}) >= 2
        if columns and _has_text(_bounds(group), chars):
            tables.append(group)
    return sorted(tables, key=lambda t: min((c[1], c[0]) for c in t))


def _corners(cell: Cell) -> tuple[tuple[float, float], ...]:
    x0, top, x1, bottom = cell
    return ((x0, top), (x0, bottom), (x1, top), (x1, bottom))


def _bounds(cells: list[Cell]) -> Cell:
    return (
        min(c[0] for c in cells),
        min(c[1] for c in cells),
        max(c[2] for c in cells),
        max(c[3] for c in cells),
    )


def _has_text(box: Cell, chars: np.ndarray) -> bool:
    """A visible character (rows of ``chars``) overlaps ``box`` (strictly, as
    ``cells_to_tables`` tests)."""
    rx0, rtop, rx1, rbottom = box
    hit = (chars[:, 0] < rx1) & (chars[:, 2] > rx0) & (chars[:, 1] < rbottom)
    return bool((hit & (chars[:, 3] > rtop)).any())


def _cells_to_rows(cells: list[Cell]) -> list[Row]:
    """``Table.rows``: cells by (top, x0), one slot per distinct left edge of the table
    in every row (``None``: a gap or a merged cell)."""
    xs = sorted({c[0] for c in cells})
    rows: list[Row] = []
    for _, row_cells in itertools.groupby(sorted(cells, key=lambda c: (c[1], c[0])), _top):
        at = {cell[0]: cell for cell in row_cells}
        rows.append(tuple(_as_box(at.get(x)) for x in xs))
    return rows


def _top(cell: Cell) -> float:
    return cell[1]


def _intersections(edges: list[dict], tol_x: float, tol_y: float) -> dict[tuple, dict]:
    """``edges_to_intersections``: the points where a vertical edge meets a horizontal
    one within the tolerances, each with the edges through it (in the same order)."""
    vertical = sorted((e for e in edges if e["orientation"] == "v"), key=_by_x_top)
    horizontal = sorted((e for e in edges if e["orientation"] == "h"), key=_by_top_x)
    tops = [h["top"] for h in horizontal]
    out: dict[tuple, dict] = {}
    for v in vertical:
        x, lo = v["x0"], bisect.bisect_left(tops, v["top"] - tol_y - _SLACK)
        hi = bisect.bisect_right(tops, v["bottom"] + tol_y + _SLACK)
        for h in horizontal[lo:hi]:
            meets = v["top"] <= h["top"] + tol_y and v["bottom"] >= h["top"] - tol_y
            if meets and h["x0"] - tol_x <= x <= h["x1"] + tol_x:
                found = out.setdefault((x, h["top"]), {"v": [], "h": []})
                found["v"].append(v)
                found["h"].append(h)
    return out


def _cells(intersections: dict[tuple, dict]) -> list[Cell]:
    """``intersections_to_cells``: per intersection in sorted order, the smallest cell
    it is the top-left corner of (the first point below, then right, whose edges
    connect)."""
    points = sorted(intersections)
    below: dict[float, list[tuple]] = {}
    right: dict[float, list[tuple]] = {}
    for point in points:  # sorted by x, then y: each list comes out in scan order
        below.setdefault(point[0], []).append(point)
        right.setdefault(point[1], []).append(point)
    v_sets = {p: {_BOX_OF(e) for e in intersections[p]["v"]} for p in points}
    h_sets = {p: {_BOX_OF(e) for e in intersections[p]["h"]} for p in points}

    def connects(p1: tuple, p2: tuple) -> bool:
        if p1[0] == p2[0] and not v_sets[p1].isdisjoint(v_sets[p2]):
            return True
        return p1[1] == p2[1] and not h_sets[p1].isdisjoint(h_sets[p2])

    cells = []
    for pt in points[:-1]:
        column, row = below[pt[0]], right[pt[1]]
        downs = column[bisect.bisect_right(column, pt) :]
        rights = row[bisect.bisect_right(row, pt) :]
        cell = _smallest_cell(pt, downs, rights, intersections, connects)
        if cell is not None:
            cells.append(cell)
    return cells


def _smallest_cell(pt, downs, rights, intersections, connects):
    for below_pt in downs:
        if not connects(pt, below_pt):
            continue
        for right_pt in rights:
            if not connects(pt, right_pt):
                continue
            corner = (right_pt[0], below_pt[1])
            closed = corner in intersections and connects(corner, right_pt)
            if closed and connects(corner, below_pt):
                return (pt[0], pt[1], corner[0], corner[1])
    return None


def _by_x_top(edge: dict) -> tuple:
    return edge["x0"], edge["top"]


def _by_top_x(edge: dict) -> tuple:
    return edge["top"], edge["x0"]


def _settings() -> dict[str, object]:
    """``find_tables``' defaults, spelled out (its ``None`` tolerances mean unset)."""
    unset = _table.UNSET
    return {
        "vertical_strategy": "lines",
        "horizontal_strategy": "lines",
        "explicit_vertical_lines": None,
        "explicit_horizontal_lines": None,
        "snap_tolerance": _table.DEFAULT_SNAP_TOLERANCE,
        "snap_x_tolerance": unset,
        "snap_y_tolerance": unset,
        "join_tolerance": _table.DEFAULT_JOIN_TOLERANCE,
        "join_x_tolerance": unset,
        "join_y_tolerance": unset,
        "edge_min_length": 3,
        "min_words_vertical": _table.DEFAULT_MIN_WORDS_VERTICAL,
        "min_words_horizontal": _table.DEFAULT_MIN_WORDS_HORIZONTAL,
        "intersection_tolerance": 3,
        "intersection_x_tolerance": unset,
        "intersection_y_tolerance": unset,
        "text_tolerance": 3,
        "text_x_tolerance": 3,
        "text_y_tolerance": 3,
    }


def char_arrays(page: pymupdf.Page, char_boxes: Sequence[BBox] | np.ndarray) -> CharArrays:
    """``_chars`` as four arrays (``x0 y0 x1 y1``), computed with the same float
    operations in the same order, so every value is equal."""
    m = page.transformation_matrix
    b = np.asarray(char_boxes, dtype=np.float64).reshape(-1, 4)
    top, bottom = b[:, 1], b[:, 3]
    band = INK_BAND_SHARE * (bottom - top)
    ya, yb = m.d * (top + band) + m.f, m.d * (bottom - band) + m.f
    return b[:, 0], np.minimum(ya, yb), b[:, 2], np.maximum(ya, yb)


def _chars(page: pymupdf.Page, char_boxes: Sequence[BBox]) -> list[dict[str, float]]:
    """The fields of find_tables' character records that ``make_edges`` reads: ``x0 x1``
    (text space) and ``y0 y1`` (the box through the page's transformation matrix, as
    ``make_chars`` computes them)."""
    m = page.transformation_matrix  # axis-aligned here: y' = d * y + f
    d, f = m.d, m.f
    out: list[dict[str, float]] = []
    for x0, top, x1, bottom in char_boxes:
        # find_tables' boxes are the glyphs' ink (TEXT_ACCURATE_BBOXES, small glyph
        # heights); ours are the font's full line height. The ink test ("a character
        # inside the region") reads the box's middle band, where the ink of letters is.
        band = INK_BAND_SHARE * (bottom - top)
        ya, yb = d * (top + band) + f, d * (bottom - band) + f
        out.append({"x0": x0, "x1": x1, "y0": min(ya, yb), "y1": max(ya, yb)})
    return out


def _rows(table: object) -> list[Row]:
    return [tuple(_as_box(cell) for cell in row.cells) for row in table.rows]  # type: ignore[attr-defined]


def _as_box(box: object) -> BBox | None:
    if box is None:
        return None
    x0, y0, x1, y1 = box  # type: ignore[misc]
    return (float(x0), float(y0), float(x1), float(y1))  # type: ignore[has-type]
