"""The edges of a page's vector drawings as the table finder's ``lines`` strategy sees
them, built from the drawings the table signals read already: ``drawing_edges`` gives
the records of ``pymupdf.table.make_edges``, ``merged_edges`` what
``TableFinder.get_edges`` makes of them (snapped, joined, filtered).

``make_edges`` reads the page's drawings a second time (``get_drawings``, which wraps
every point and rectangle in a PyMuPDF object) and joins the drawings' rectangles that
"almost touch" into candidate table boxes by scanning every remaining rectangle for
every one it grows (``clean_graphics``: 263,000 neighbour tests for one load of the
72-page Pfizer 10-Q). ``drawing_edges`` returns the same edge records in the same order, from
``page.get_cdrawings()``'s plain tuples, with the same join done by testing only the
rectangles near the growing box (a neighbour lies within the snap tolerance of it: one
vectorised test), in the scan order of the original (from the last rectangle back),
which is what makes the joined boxes equal. ``merged_edges`` redoes ``merge_edges`` on
slim records (the fields the cell search reads) instead of copying every record's
twenty fields for each move.

Tied to the pinned PyMuPDF's table module (default clip, ``lines`` strategy, an
unrotated page); ``tests/test_tables_ruled.py`` compares the records over the corpus's
ruled documents, page by page.

Coordinates: PyMuPDF's unrotated page space, points, y downwards (the edge records'
``y0``/``y1`` are flipped from the page's height, as pdfplumber's are).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

Rect = tuple[float, float, float, float]
Point = tuple[float, float]
# Rows of the pairwise overlap test computed at once (memory: this many times the
# rectangles, in booleans).
_BLOCK = 512
_SLACK_PT = 1e-6  # the vectorised pre-test is this much wider; the exact test decides


def drawing_edges(
    paths: Sequence[dict],
    page_rect: Rect,
    page_number: int,
    snap: tuple[float, float],
    min_length: float,
    boxes: list[Rect],
) -> list[dict]:
    """``make_edges(page, tset=settings)``'s records for ``paths`` (``get_cdrawings()``
    of the page). ``page_rect``: ``page.rect``; ``page_number``: 0-based; ``snap``: the
    resolved snap tolerances (x, y); ``min_length``: ``edge_min_length``; ``boxes``: the
    joined drawing boxes that hold a character (``text_boxes``), whose sides are edges
    too."""
    snap_x, snap_y = snap
    height = page_rect[3] - page_rect[1]
    maker = _LineMaker(page_rect, page_number, height, snap_x, snap_y)
    edges: list[dict] = []
    for p in paths:
        items = list(p["items"])
        if p.get("closePath") and items and items[0][0] == "l" and items[-1][0] == "l":
            items.append(("l", items[-1][2], items[0][1]))
        style = (p.get("width"), p.get("color") or p.get("fill"))
        for item in items:
            kind = item[0]
            if kind == "l":
                maker.add(edges, style, item[1], item[2])
            elif kind == "re":
                _rect_edges(edges, maker, style, _normalised(item[1]), min_length)
            elif kind == "qu":
                ul, ur, ll, lr = item[1]
                for a, b in ((ul, ll), (ll, lr), (lr, ur), (ur, ul)):
                    maker.add(edges, style, a, b)
    border = (1, (0, 0, 0))
    for x0, y0, x1, y1 in boxes:
        maker.add(edges, border, (x0, y0), (x1, y0))
        maker.add(edges, border, (x0, y1), (x1, y1))
        maker.add(edges, border, (x0, y0), (x0, y1))
        maker.add(edges, border, (x1, y0), (x1, y1))
    return edges


def text_boxes(
    paths: Sequence[dict], snap: tuple[float, float], holds_char: Callable[[Rect], bool]
) -> list[Rect]:
    """``make_edges``' joined drawing boxes that hold a character (``clean_graphics``'s
    boxes, whose four sides become edges). ``holds_char``: whether a character of the
    page lies wholly inside a rectangle (``chars_in_rect``)."""
    rects = sorted({tuple(p["rect"]) for p in paths}, key=_by_bottom_left)
    return [box for box in join_neighbours(rects, *snap) if holds_char(box)]


def _rect_edges(
    edges: list[dict], maker: _LineMaker, style: tuple, rect: Rect, min_length: float
) -> None:
    """A rectangle item: one line through its middle when it is thin (a simulated rule),
    else its four sides (left, bottom, right, top)."""
    x0, y0, x1, y1 = rect
    width, height = x1 - x0, y1 - y0
    if (width <= min_length and width < height) or (height <= min_length and height < width):
        if width < height:
            x = abs(x1 + x0) / 2
            maker.add(edges, style, (x, y0), (x, y1))
        else:
            y = abs(y1 + y0) / 2
            maker.add(edges, style, (x0, y), (x1, y))
        return
    maker.add(edges, style, (x0, y0), (x0, y1))
    maker.add(edges, style, (x0, y1), (x1, y1))
    maker.add(edges, style, (x1, y1), (x1, y0))
    maker.add(edges, style, (x1, y0), (x0, y0))


class _LineMaker:
    """``make_line`` + ``line_to_edge``: an axis-parallel segment clipped to the page as
    an edge record (nothing for a slanted or empty one)."""

    def __init__(
        self, clip: Rect, number: int, height: float, snap_x: float, snap_y: float
    ) -> None:
        self.clip, self.height = clip, height
        self.page_number, self.doctop_basis = number + 1, number * height
        self.snap_x, self.snap_y = snap_x, snap_y

    def add(self, edges: list[dict], style: tuple, p1: Point, p2: Point) -> None:
        if not (abs(p1[0] - p2[0]) <= self.snap_x or abs(p1[1] - p2[1]) <= self.snap_y):
            return
        x0, x1 = min(p1[0], p2[0]), max(p1[0], p2[0])
        y0, y1 = min(p1[1], p2[1]), max(p1[1], p2[1])
        cx0, cy0, cx1, cy1 = self.clip
        if x0 > cx1 or x1 < cx0 or y0 > cy1 or y1 < cy0:
            return
        x0, x1 = max(x0, cx0), min(x1, cx1)
        y0, y1 = max(y0, cy0), min(y1, cy1)
        width, height = x1 - x0, y1 - y0
        if width == height == 0:
            return
        edges.append(
            {
                "x0": x0,
                "y0": self.height - y0,
                "x1": x1,
                "y1": self.height - y1,
                "width": width,
                "height": height,
                "pts": [(x0, y0), (x1, y1)],
                "linewidth": style[0],
                "stroke": True,
                "fill": False,
                "evenodd": False,
                "stroking_color": style[1],
                "non_stroking_color": None,
                "object_type": "line",
                "page_number": self.page_number,
                "stroking_pattern": None,
                "non_stroking_pattern": None,
                "top": y0,
                "bottom": y1,
                "doctop": y0 + self.doctop_basis,
                "orientation": "h" if y0 == y1 else "v",
            }
        )


def join_neighbours(rects: list[Rect], snap_x: float, snap_y: float) -> list[Rect]:
    """``clean_graphics``' joined rectangles, in its order: the first remaining rectangle
    takes in, from the last one back, every rectangle that neighbours it as it grows,
    and again until one pass takes none. ``rects`` sorted by (bottom, left) as
    ``clean_graphics`` sorts them."""
    near = _Near(rects, snap_x, snap_y)
    joined: list[Rect] = []
    for first, rect in enumerate(rects):
        if not near.alive[first]:
            continue
        near.alive[first] = False
        box = rect
        repeat = not near.lonely[first]
        while repeat:
            repeat = False
            candidates, i = near.below(box, first, len(rects)), 0
            while i < len(candidates):
                k = candidates[i]
                i += 1
                other = rects[k]
                if not _neighbours(box, other, snap_x, snap_y):
                    continue
                near.alive[k], repeat = False, True
                grown = _include(_include(box, other[0], other[1]), other[2], other[3])
                if grown != box:  # the box reaches further: look again below k
                    box = grown
                    candidates, i = near.below(box, first, k), 0
        joined.append(box)
    return joined


class _Near:
    """Which rectangles may neighbour a box: a neighbour's corner lies within the snap
    tolerances of the other's box, so their boxes widened by the tolerances overlap.
    ``below`` lists the live ones of an index range whose widened boxes overlap a
    widened box, highest index first (one vectorised test); the exact test decides."""

    def __init__(self, rects: list[Rect], snap_x: float, snap_y: float) -> None:
        a = np.asarray(rects, dtype=np.float64).reshape(-1, 4)
        self.snap_x, self.snap_y = snap_x + _SLACK_PT, snap_y + _SLACK_PT
        self.x0 = np.minimum(a[:, 0], a[:, 2]) - self.snap_x
        self.x1 = np.maximum(a[:, 0], a[:, 2]) + self.snap_x
        self.y0 = np.minimum(a[:, 1], a[:, 3]) - self.snap_y
        self.y1 = np.maximum(a[:, 1], a[:, 3]) + self.snap_y
        self.alive = np.ones(len(a), dtype=bool)
        self.lonely = self._lonely()

    def _lonely(self) -> np.ndarray:
        """Rectangles no other one may neighbour (most on a page): their turn takes
        nothing in. Computed in blocks of rows, so memory stays linear."""
        n = len(self.x0)
        lonely = np.ones(n, dtype=bool)
        for s in range(0, n, _BLOCK):
            e = min(s + _BLOCK, n)
            overlap = (self.x0[s:e, None] <= self.x1[None, :]) & (
                self.x1[s:e, None] >= self.x0[None, :]
            )
            overlap &= (self.y0[s:e, None] <= self.y1[None, :]) & (
                self.y1[s:e, None] >= self.y0[None, :]
            )
            lonely[s:e] = overlap.sum(axis=1) <= 1  # itself
        return lonely

    def below(self, box: Rect, first: int, cursor: int) -> list[int]:
        """Live indices in (first, cursor) whose widened boxes overlap ``box``'s."""
        bx0, bx1 = min(box[0], box[2]) - self.snap_x, max(box[0], box[2]) + self.snap_x
        by0, by1 = min(box[1], box[3]) - self.snap_y, max(box[1], box[3]) + self.snap_y
        s = slice(first + 1, cursor)
        hit = self.alive[s] & (self.x0[s] <= bx1) & (self.x1[s] >= bx0)
        hit &= (self.y0[s] <= by1) & (self.y1[s] >= by0)
        return (np.flatnonzero(hit)[::-1] + (first + 1)).tolist()


def _neighbours(r1: Rect, r2: Rect, snap_x: float, snap_y: float) -> bool:
    """``make_edges``' ``are_neighbors``: a corner of one lies within the snap
    tolerances of the other's box."""
    if (
        r2[0] - snap_x <= r1[0] <= r2[2] + snap_x or r2[0] - snap_x <= r1[2] <= r2[2] + snap_x
    ) and (r2[1] - snap_y <= r1[1] <= r2[3] + snap_y or r2[1] - snap_y <= r1[3] <= r2[3] + snap_y):
        return True
    return (
        r1[0] - snap_x <= r2[0] <= r1[2] + snap_x or r1[0] - snap_x <= r2[2] <= r1[2] + snap_x
    ) and (r1[1] - snap_y <= r2[1] <= r1[3] + snap_y or r1[1] - snap_y <= r2[3] <= r1[3] + snap_y)


def _include(rect: Rect, x: float, y: float) -> Rect:
    """MuPDF's ``fz_include_point_in_rect`` (each bound moved out to the point)."""
    x0, y0, x1, y1 = rect
    if x < x0:
        x0 = x
    if x > x1:
        x1 = x
    if y < y0:
        y0 = y
    if y > y1:
        y1 = y
    return (x0, y0, x1, y1)


def _normalised(rect: Sequence[float]) -> Rect:
    x0, y0, x1, y1 = rect[:4]
    if x1 < x0:
        x0, x1 = x1, x0
    if y1 < y0:
        y0, y1 = y1, y0
    return (x0, y0, x1, y1)


def _by_bottom_left(rect: Rect) -> tuple[float, float]:
    return rect[3], rect[0]


def merged_edges(
    edges: list[dict], snap: tuple[float, float], join: tuple[float, float], min_length: float
) -> list[dict]:
    """``TableFinder.get_edges()`` for the ``lines`` strategy over ``edges`` (the records
    of ``drawing_edges``): vertical edges at least 1 pt high and horizontal ones at least
    1 pt wide, snapped to their clusters' average position (``snap``: x, y tolerances),
    collinear ones joined (``join``: x, y), those shorter than ``min_length`` dropped;
    the same values, in the same order, as ``merge_edges`` computes them. The records
    carry the fields the cell search reads: ``x0 x1 top bottom width height
    orientation``."""
    vertical = [_slim(e) for e in edges if e["orientation"] == "v" and e["height"] >= 1]
    horizontal = [_slim(e) for e in edges if e["orientation"] == "h" and e["width"] >= 1]
    snap_x, snap_y = snap
    if snap_x > 0 or snap_y > 0:
        vertical = _snapped(vertical, "x0", "x1", snap_x)
        horizontal = _snapped(horizontal, "top", "bottom", snap_y)
    both = sorted(vertical + horizontal, key=_group_of)
    out: list[dict] = []
    for (orientation, _), group in itertools.groupby(both, key=_group_of):
        if orientation == "h":
            out += _joined(list(group), "x0", "x1", "width", join[0])
        else:
            out += _joined(list(group), "top", "bottom", "height", join[1])
    return [e for e in out if e["height" if e["orientation"] == "v" else "width"] >= min_length]


_FIELDS = ("x0", "x1", "top", "bottom", "width", "height", "orientation")


def _slim(edge: dict) -> dict:
    return {key: edge[key] for key in _FIELDS}


def _snapped(edges: list[dict], low: str, high: str, tolerance: float) -> list[dict]:
    """``snap_objects``: positions (``low``) clustered where consecutive sorted distinct
    values lie within ``tolerance``; each edge moved by its cluster's average minus its
    own position (both ends); clusters in order of position, edges within one in
    input order."""
    values = sorted(set(e[low] for e in edges))
    cluster: dict[float, int] = {}
    k, last = -1, None
    for value in values:
        if last is None or not value <= last + tolerance:
            k += 1
        cluster[value] = k
        last = value
    members: list[list[dict]] = [[] for _ in range(k + 1)]
    for e in edges:
        members[cluster[e[low]]].append(e)
    out: list[dict] = []
    for group in members:
        average = sum(e[low] for e in group) / len(group)
        for e in group:
            shift = average - e[low]
            out.append({**e, low: e[low] + shift, high: e[high] + shift})
    return out


def _joined(edges: list[dict], low: str, high: str, length: str, tolerance: float) -> list[dict]:
    """``join_edge_group``: edges on one line sorted by their start; one that starts
    within ``tolerance`` of the previous joined edge's end extends it."""
    ordered = sorted(edges, key=lambda e: e[low])
    joined = [ordered[0]]
    for e in ordered[1:]:
        last = joined[-1]
        if e[low] <= last[high] + tolerance:
            if e[high] > last[high]:
                grown = e[high]
                extent = grown - last[low] if low == "x0" else last[length] + (grown - last[high])
                joined[-1] = {**last, high: grown, length: extent}
        else:
            joined.append(e)
    return joined


def _group_of(edge: dict) -> tuple[str, float]:
    return ("h", edge["top"]) if edge["orientation"] == "h" else ("v", edge["x0"])
