"""Axis-aligned boxes in PDF points (1/72 inch).

A box is ``(x0, y0, x1, y1)`` with ``x0 <= x1`` and ``y0 <= y1``. Its frame is the one
its field names; unless a field says otherwise it is the page **as rendered**: PyMuPDF's
page coordinates after the page's rotation, origin at the top-left corner, y growing
downwards (``Block.bbox_pt``, ``TextLine.bbox_pt``, ``TableRegion.page_bbox_pt``).
The one exception is table detection, which works in the unrotated text space of
PyMuPDF's ``find_tables`` (``TableRegion.text_bbox_pt`` and its cells, named so; they
differ from the rendered frame only on rotated pages).

``Box`` is a ``NamedTuple``: frozen, equal to the plain 4-tuple it holds, and written to
JSON as the same 4-list, so records that hold one serialise as before. The functions take
any 4-tuple (``BBox``), so hot loops over plain tuples use them without building a
``Box``. A box whose ``x0`` is NaN stands for characters with no box (those the text
builder inserted) and is skipped by unions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

BBox = tuple[float, float, float, float]


class Box(NamedTuple):
    """A box in PDF points (see the module docstring for its frame)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def of(cls, values: Iterable[float]) -> Box:
        """A box from any four numbers (a ``pymupdf.Rect``, a list read from JSON)."""
        x0, y0, x1, y1 = values
        return cls(float(x0), float(y0), float(x1), float(y1))

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        """Square points; 0 for an inverted or degenerate box."""
        return max(0.0, self.x1 - self.x0) * max(0.0, self.y1 - self.y0)

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    def union(self, other: BBox) -> Box:
        return Box(
            min(self.x0, other[0]),
            min(self.y0, other[1]),
            max(self.x1, other[2]),
            max(self.y1, other[3]),
        )

    def contains_centre_of(self, other: BBox) -> bool:
        return contains_centre(self, other)

    def overlaps(self, other: BBox) -> bool:
        return overlaps(self, other)

    def iou(self, other: BBox) -> float:
        return iou(self, other)


def union_of(boxes: Iterable[BBox]) -> Box | None:
    """The smallest box holding every box whose ``x0`` is not NaN, in one pass (the first
    of equal values wins, as with ``min``/``max``); ``None`` when there is none."""
    x0 = y0 = x1 = y1 = 0.0
    found = False
    for bx0, by0, bx1, by1 in boxes:
        if bx0 != bx0:  # NaN: a character with no box
            continue
        if not found:
            x0, y0, x1, y1 = bx0, by0, bx1, by1
            found = True
            continue
        if bx0 < x0:
            x0 = bx0
        if by0 < y0:
            y0 = by0
        if bx1 > x1:
            x1 = bx1
        if by1 > y1:
            y1 = by1
    return Box(x0, y0, x1, y1) if found else None


def bounding(boxes: Iterable[BBox]) -> Box:
    """``union_of`` for boxes known to hold at least one real box (``ValueError`` else)."""
    box = union_of(boxes)
    if box is None:
        raise ValueError("the union of no boxes")
    return box


def contains_centre(area: BBox, box: BBox) -> bool:
    """Whether the centre of ``box`` lies in ``area`` (edges included)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return area[0] <= cx <= area[2] and area[1] <= cy <= area[3]


def overlaps(a: BBox, b: BBox) -> bool:
    """Whether the two boxes share an area (touching edges do not)."""
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def iou(a: BBox, b: BBox) -> float:
    """Intersection over union of the two areas (0 when they do not overlap)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0  # areas too small for a float are no area
