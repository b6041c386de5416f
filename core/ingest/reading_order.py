"""Reading order of the text blocks of one page: recursive XY-cut with column bands.

Boxes are ``(x0, y0, x1, y1)`` in points, y growing downwards, in the page's unrotated
text space (the space PyMuPDF's ``rawdict`` reports), which is the space the text runs in.

The algorithm, applied recursively to a region (a set of boxes):

1. Cut the region into *bands* at every horizontal gap (a y range no box covers).
2. Merge consecutive bands while their union still has a vertical gap (a column gutter
   at least ``min_gutter_pt`` wide) that passes through every merged band; a band that
   crosses every gutter (a full-width title, abstract, figure or table) starts a new
   group and so splits the columns above it from the columns below it, and so does a
   single column above columns that crosses one of their gutters (a centred title over
   author columns). A band that sits in one column (where the other column ends early)
   joins the group.
3. A merged group with a gutter is cut into columns at its gutters, read left to right,
   and each column is ordered recursively.
4. A region that is one band without a gutter may still hold columns bridged by a wide
   block that overlaps them vertically (a footnote rule, a side note, a banner): the
   fewest wide blocks whose removal lets the rest split are taken out, cut the rest into
   segments above and below them, and are read between those segments.
5. Otherwise the region is read top to bottom (boxes on one text line left to right).

So the text of a column comes before the text of the column to its right within each
band, and a full-width block is read where it sits between bands.
"""

from __future__ import annotations

from collections.abc import Sequence

Box = tuple[float, float, float, float]

# Narrower vertical gaps are word or cell spacing, not column gutters.
DEFAULT_MIN_GUTTER_PT = 4.5
# A block at least this share of the region's width may be a full-width one.
_SPANNING_SHARE = 0.45
_MAX_DEPTH = 12


def reading_order(
    boxes: Sequence[Box], *, min_gutter_pt: float = DEFAULT_MIN_GUTTER_PT
) -> list[int]:
    """Indices of ``boxes`` in reading order (a permutation of ``range(len(boxes))``)."""
    indices = list(range(len(boxes)))
    if len(indices) <= 1:
        return indices
    return _order_region(boxes, indices, min_gutter_pt, 0)


def _order_region(boxes: Sequence[Box], idx: list[int], gutter: float, depth: int) -> list[int]:
    if len(idx) <= 1 or depth > _MAX_DEPTH:
        return _top_down(boxes, idx)
    groups = _group_bands(boxes, _split(boxes, idx, axis=1, min_gap=0.0), gutter)
    if len(groups) > 1:
        return [i for group in groups for i in _order_region(boxes, group, gutter, depth + 1)]
    columns = _split(boxes, idx, axis=0, min_gap=gutter)
    if len(columns) > 1:
        return [i for col in columns for i in _order_region(boxes, col, gutter, depth + 1)]
    spanning = _spanning(boxes, idx, gutter)
    if spanning:
        return _around_spanning(boxes, idx, spanning, gutter, depth)
    return _top_down(boxes, idx)


def _spanning(boxes: Sequence[Box], idx: list[int], gutter: float) -> list[int]:
    """The fewest wide blocks (up to three) whose removal lets the rest split into bands
    or columns: a full-width block that touches the columns' vertical range."""
    left = min(boxes[i][0] for i in idx)
    right = max(boxes[i][2] for i in idx)
    wide = sorted(
        (i for i in idx if boxes[i][2] - boxes[i][0] >= _SPANNING_SHARE * (right - left)),
        key=lambda i: boxes[i][0] - boxes[i][2],
    )
    for k in range(1, min(3, len(wide)) + 1):
        removed = set(wide[:k])
        rest = [i for i in idx if i not in removed]
        if len(rest) < 2:
            return []
        if len(_split(boxes, rest, axis=0, min_gap=gutter)) > 1:
            return wide[:k]
        if len(_split(boxes, rest, axis=1, min_gap=0.0)) > 1:
            return wide[:k]
    return []


def _around_spanning(
    boxes: Sequence[Box], idx: list[int], spanning: list[int], gutter: float, depth: int
) -> list[int]:
    """Spanning blocks cut the region into segments by their vertical centres; each
    segment is ordered on its own and the spanning block is read between them."""
    cuts = sorted(spanning, key=lambda i: boxes[i][1] + boxes[i][3])
    centres = [(boxes[i][1] + boxes[i][3]) / 2 for i in cuts]
    segments: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    chosen = set(spanning)
    for i in idx:
        if i not in chosen:
            centre = (boxes[i][1] + boxes[i][3]) / 2
            segments[sum(1 for c in centres if c < centre)].append(i)
    out = _order_region(boxes, segments[0], gutter, depth + 1) if segments[0] else []
    for cut, segment in zip(cuts, segments[1:], strict=True):
        out.append(cut)
        if segment:
            out.extend(_order_region(boxes, segment, gutter, depth + 1))
    return out


def _group_bands(boxes: Sequence[Box], bands: list[list[int]], gutter: float) -> list[list[int]]:
    """Merge consecutive bands while their union keeps a column gutter (see the module
    docstring). A group of one column joins the columns below it only when it sits inside
    one of them: a centred title narrower than the page, which leaves a sliver of gutter
    beside it but crosses the gutter between two author columns, stays above them. A band
    sitting in one column below columns (the other ended early) still joins."""
    groups: list[list[int]] = []
    current: list[int] = []
    current_extents: list[tuple[float, float]] = []  # the x extents of current's columns
    for band in bands:
        band_extents = _extents([(boxes[i][0], boxes[i][2]) for i in band], gutter)
        if current:
            union = _extents(current_extents + band_extents, gutter)
            # one column above columns joins them only when it sits inside one of them
            joins = len(union) == len(band_extents) if len(current_extents) == 1 else True
            if len(union) > 1 and joins:
                current, current_extents = current + band, union
                continue
        if current:
            groups.append(current)
        current, current_extents = list(band), band_extents
    if current:
        groups.append(current)
    return groups


def _extents(spans: list[tuple[float, float]], min_gap: float) -> list[tuple[float, float]]:
    """The ``(start, end)`` extents of the parts ``_split`` cuts intervals into at gaps
    wider than ``min_gap``. The extents of two sets' parts, together, give the parts of
    the two sets' union, so a growing group is never split again box by box."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if out and start - out[-1][1] <= min_gap:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _split(boxes: Sequence[Box], idx: list[int], *, axis: int, min_gap: float) -> list[list[int]]:
    """Split ``idx`` at gaps wider than ``min_gap`` of the projection on ``axis`` (0=x, 1=y).

    Returns the parts in increasing coordinate order; one part when there is no gap.
    """
    lo, hi = axis, axis + 2
    ordered = sorted(idx, key=lambda i: (boxes[i][lo], boxes[i][hi]))
    parts: list[list[int]] = [[ordered[0]]]
    reach = boxes[ordered[0]][hi]
    for i in ordered[1:]:
        start = boxes[i][lo]
        if start - reach > min_gap:
            parts.append([i])
        else:
            parts[-1].append(i)
        reach = max(reach, boxes[i][hi])
    return parts


def _top_down(boxes: Sequence[Box], idx: list[int]) -> list[int]:
    """Top to bottom; boxes whose vertical centres lie within one another's height are
    one text line and read left to right."""
    ordered = sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))
    rows: list[list[int]] = []
    for i in ordered:
        x0, y0, x1, y1 = boxes[i]
        centre = (y0 + y1) / 2
        if rows:
            r = boxes[rows[-1][0]]
            if r[1] <= centre <= r[3]:
                rows[-1].append(i)
                continue
        rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda i: boxes[i][0])]
