"""Cheap signals that a PDF page may hold a ruled table, so ``find_tables`` (through
``core.tables.ruled``) runs only where they agree: the page's text lines form rows of
three or more fragments whose left edges, right edges or centres align in columns
(``looks_tabular``), or rows of two (a table of terms and definitions) when the rulings
make a grid; the page draws at least three horizontal and three vertical rulings
(``page.get_cdrawings()``) at three or more x positions (the shaded bands of a statement
have edges at two); the text inside the rulings' extent looks tabular too; the rulings
cross at most ``MAX_PAGE_CROSSINGS`` times (the finder's cost grows with the crossings;
a 200 x 200 mesh took over 90 s with ``find_tables``).

Coordinates: boxes are in the page's unrotated text space (``rawdict``), points, y down.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pymupdf

from core.provenance.geometry import BBox, contains_centre

# A grid needs at least this many ruling segments of each orientation.
MIN_RULES_PER_AXIS = 3
MIN_GRID_ROWS = 3
MIN_ALIGNED_COLUMNS = 2
# A page whose text rows have only two fragments (terms and definitions, names and
# roles) is searched when its rulings cross this often: a grid of 3 x 3 points, two
# rows of two cells.
MIN_TEXT_TABLE_CROSSINGS = 9
# Rulings crossing more often than this on one page are a mesh (a plot, a hatched area,
# a crafted page), not a table: find_tables is quadratic in the crossings (1.7 s for a
# 100 x 100 mesh, 9 s for 140 x 140, over 90 s for 200 x 200); the densest table page
# of the financebench PDFs tried (Johnson & Johnson's earnings) has 835.
MAX_PAGE_CROSSINGS = 10_000
# The document's pages together may cost find_tables this much, counted as the sum of
# their crossings squared (four 100 x 100 meshes, about 7 s; 570 pages as dense as the
# densest real one); later pages are read without tables.
MAX_DOCUMENT_TABLE_WORK = 4 * MAX_PAGE_CROSSINGS**2
# A page drawn with more vector paths than this is a figure (a map, a chart, a diagram),
# not a table: the finder joins its paths into candidate boxes (find_tables' pairwise
# join took 0.2-0.3 s for the 2,400 and 3,100 paths of GeoTopo's two figure pages, where
# it kept no table); the densest table page of the shared filings has 673 (the Pfizer
# 10-Q's p. 47).
MAX_TABLE_PAGE_PATHS = 2_000
# ... or with more drawing items than this (lines, rectangles, quads, curves: one path can
# hold thousands): the finder builds an edge for every line and rectangle (200,000 short
# lines in one path cost it 1.4 s); the densest page it searches in the shared filings
# draws 673 (the Pfizer 10-Q's p. 47, one item a path), the densest with a table 650.
MAX_TABLE_PAGE_ITEMS = 8_000
_KEY_SPAN = float(2**21)  # |coordinate| below this: the pair key fits a double exactly
_MAX_CROSSING_CHECKS = 1_000_000
_CROSSING_TOLERANCE_PT = 1.0
_FINDER_TOLERANCE_PT = 3.0  # find_tables' intersection tolerance
_RULE_THICKNESS_PT = 3.0
_MIN_RULE_LENGTH_PT = 8.0


def rulings(page: pymupdf.Page) -> tuple[list[BBox], list[BBox]]:
    """The page's (horizontal, vertical) ruling segments: thin axis-aligned lines and the
    edges of stroked or filled rectangles, as boxes in unrotated space."""
    return rulings_of(page.get_cdrawings())


def rulings_of(paths: list[dict]) -> tuple[list[BBox], list[BBox]]:
    """``rulings`` of drawing paths as ``page.get_cdrawings()`` gives them."""
    horizontal: list[BBox] = []
    vertical: list[BBox] = []
    for path in paths:
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
            elif item[0] == "re":
                box = tuple(item[1])[:4]
                if box[2] - box[0] > _RULE_THICKNESS_PT and box[3] - box[1] > _RULE_THICKNESS_PT:
                    x0, y0, x1, y1 = box
                    horizontal += [(x0, y0, x1, y0), (x0, y1, x1, y1)]
                    vertical += [(x0, y0, x0, y1), (x1, y0, x1, y1)]
                    continue
            else:
                continue
            w, h = box[2] - box[0], box[3] - box[1]
            if h <= _RULE_THICKNESS_PT and w >= _MIN_RULE_LENGTH_PT:
                horizontal.append(box)
            elif w <= _RULE_THICKNESS_PT and h >= _MIN_RULE_LENGTH_PT:
                vertical.append(box)
    return horizontal, vertical


def looks_tabular(line_boxes: list[BBox], per_row: int = 3) -> bool:
    """Cheap text signal: at least ``MIN_GRID_ROWS`` baselines carry ``per_row`` or more
    line fragments, and fragment left edges, right edges or centres (4 pt steps) line up
    across such rows in at least ``MIN_ALIGNED_COLUMNS`` places (columns, however
    aligned)."""
    baselines: dict[int, list[BBox]] = {}
    for box in line_boxes:
        baselines.setdefault(int(box[3] // 3.0), []).append(box)
    rows = [row for row in baselines.values() if len(row) >= per_row]
    if len(rows) < MIN_GRID_ROWS:
        return False
    columns: dict[tuple[int, int], int] = {}
    for row in rows:
        edges = {(0, int(b[0] // 4.0)) for b in row} | {(1, int(b[2] // 4.0)) for b in row}
        edges |= {(2, int((b[0] + b[2]) // 8.0)) for b in row}
        for edge in edges:
            columns[edge] = columns.get(edge, 0) + 1
    return sum(1 for n in columns.values() if n >= MIN_GRID_ROWS) >= MIN_ALIGNED_COLUMNS


def table_work(page: pymupdf.Page, line_boxes: list[BBox]) -> int:
    """0 when the page cannot hold a table; else how many times its rulings cross (see
    ``page_signals``)."""
    return page_signals(page, line_boxes)[0]


class PageSignals(NamedTuple):
    """What ``page_signals`` saw: ``crossings`` 0 when the page cannot hold a table, else
    how many times its rulings cross, at least 1 (the measure of find_tables' cost);
    ``per_row`` the fragments per row the text showed; ``paths`` the page's
    ``get_cdrawings()`` when they were read (the finder reads them, not the page)."""

    crossings: int
    per_row: int
    paths: list[dict] | None = None


def page_signals(page: pymupdf.Page, line_boxes: list[BBox]) -> PageSignals:
    """Whether the page may hold a ruled table (``PageSignals``). A table needs text that
    looks tabular (rows of three fragments; or of two, a table of terms and definitions,
    when the rulings cross at least ``MIN_TEXT_TABLE_CROSSINGS`` times), rulings in both
    directions, tabular text inside the rulings' extent, at most ``MAX_PAGE_CROSSINGS``
    crossings and at most ``MAX_TABLE_PAGE_PATHS`` drawing paths of at most
    ``MAX_TABLE_PAGE_ITEMS`` items."""
    per_row = 3 if looks_tabular(line_boxes) else 2
    if per_row == 2 and not looks_tabular(line_boxes, per_row):
        return PageSignals(0, per_row)
    paths = page.get_cdrawings()
    if len(paths) > MAX_TABLE_PAGE_PATHS:
        return PageSignals(0, per_row)
    if sum(len(path.get("items", ())) for path in paths) > MAX_TABLE_PAGE_ITEMS:
        return PageSignals(0, per_row)
    horizontal, vertical = rulings_of(paths)
    if len(horizontal) < MIN_RULES_PER_AXIS or len(vertical) < MIN_RULES_PER_AXIS:
        return PageSignals(0, per_row)
    if len({round(v[0] / 2.0) for v in vertical}) < MIN_RULES_PER_AXIS:
        return PageSignals(0, per_row)  # shaded rows (a statement's bands): edges at two x
    every = horizontal + vertical
    x0, y0 = min(b[0] for b in every), min(b[1] for b in every)
    x1, y1 = max(b[2] for b in every), max(b[3] for b in every)
    inside = [b for b in line_boxes if contains_centre((x0, y0, x1, y1), b)]
    if not looks_tabular(inside, per_row):
        return PageSignals(0, per_row)
    crossings = count_crossings(horizontal, vertical, MAX_PAGE_CROSSINGS)
    if per_row == 2:
        # the rulings of a word processor's table stop short of each other by up to the
        # finder's intersection tolerance (3 pt); a grid must show with it
        near = count_crossings(horizontal, vertical, MAX_PAGE_CROSSINGS, _FINDER_TOLERANCE_PT)
        if near < MIN_TEXT_TABLE_CROSSINGS:
            return PageSignals(0, per_row)
        crossings = max(crossings, near)
    if crossings > MAX_PAGE_CROSSINGS:
        return PageSignals(0, per_row)
    return PageSignals(max(crossings, 1), per_row, paths)


def count_crossings(
    horizontal: list[BBox], vertical: list[BBox], cap: int, tol: float = _CROSSING_TOLERANCE_PT
) -> int:
    """How many distinct points (1 pt grid) the horizontal and vertical rulings cross at
    (a cell's edges drawn twice cross at the same points; find_tables merges them too);
    ``cap + 1`` when the count or the pairs to look at pass what a table can have.
    ``tol``: how far (points) a ruling may stop short of the other and still cross it.

    Each horizontal ruling is paired with the vertical ones whose x lies within its
    extent (widened by ``tol``; a sorted search), and a pair crosses when the horizontal
    one's middle lies within the vertical one's extent (widened alike); all in arrays."""
    if not horizontal or not vertical:
        return 0
    v = np.asarray(vertical, dtype=np.float64).reshape(-1, 4)
    v = v[np.argsort(v[:, 0], kind="stable")]
    xs, tops, bottoms = v[:, 0], v[:, 1], v[:, 3]
    h = np.asarray(horizontal, dtype=np.float64).reshape(-1, 4)
    ys = (h[:, 1] + h[:, 3]) / 2
    lo = np.searchsorted(xs, h[:, 0] - tol, side="left")
    hi = np.searchsorted(xs, h[:, 2] + tol, side="right")
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    if total > _MAX_CROSSING_CHECKS:
        return cap + 1
    if total == 0:
        return 0
    pair_h = np.repeat(np.arange(len(h)), counts)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    pair_v = starts + np.arange(total)
    y = ys[pair_h]
    crosses = (tops[pair_v] - tol <= y) & (y <= bottoms[pair_v] + tol)
    if not crosses.any():
        return 0
    found = _distinct_points(np.rint(xs[pair_v[crosses]]), np.rint(y[crosses]))
    return cap + 1 if found > cap else found


def _distinct_points(x: np.ndarray, y: np.ndarray) -> int:
    """How many distinct ``(x, y)`` pairs of whole numbers there are: one sort of one key
    per pair (``x * 2S + y + S`` is exact and one-to-one while both lie within ``S``),
    else of the pairs as rows."""
    finite = len(x) > 0 and bool(np.isfinite(x).all() and np.isfinite(y).all())
    if finite and max(np.abs(x).max(), np.abs(y).max()) < _KEY_SPAN:
        return len(np.unique(x * (2 * _KEY_SPAN) + (y + _KEY_SPAN)))
    return len(np.unique(np.stack([x, y], axis=1), axis=0))
