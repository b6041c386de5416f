"""Geometry of overlays: which rectangles of a rendered page show a span, a block, a chunk.

All boxes are ``(x0, y0, x1, y1)`` in PDF points with the origin at the top-left corner of
the rendered page (the coordinates of ``Document.char_bbox_pt``). A span lights up as one
rectangle per laid-out line: consecutive characters of the span that share a page and a
line (their centres across the line agree and no large gap separates them along it) are
merged by the union of their boxes. Characters the text builder inserted (line breaks) have no box
and are skipped, so a highlight covers exactly the cited glyphs, never a whole block.

Colours are defined here once, for every page of the app: ``BLOCK_COLOURS`` per block kind,
``CHUNK_COLOURS`` alternating between neighbouring chunks, ``OVERLAP_COLOUR`` for
characters that belong to more than one chunk, ``HIGHLIGHT_COLOUR`` for a citation.

Chunk numbers never sit on text: ``margin_labels`` puts each in the page margin beside the
line where its chunk starts (``start_tick`` marks the exact start on that line), and an
overlap is a thin band under its lines (``overlap_band``), not a fill over the glyphs.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.bounded_cache import BoundedCache
from core.provenance.geometry import union_of
from core.provenance.types import BBox, Block, Document

BLOCK_COLOURS: dict[str, str] = {
    "heading": "#d1495b",
    "paragraph": "#2e86ab",
    "list": "#3bb273",
    "table": "#7768ae",
    "code": "#a0522d",
    "caption": "#e1a100",
    "header": "#6c757d",
    "footer": "#d291bc",
    "turn": "#118ab2",
}
CHUNK_COLOURS: tuple[str, str] = ("#2e86ab", "#f18f01")
OVERLAP_COLOUR = "#c73e1d"
HIGHLIGHT_COLOUR = "#ffd400"
HIGHLIGHT_STROKE = "#d97706"

LABEL_FONT_PT = 9.0  # chunk numbers, in points of the page (they scale with it)
MIN_LABEL_FONT_PT = 5.0  # the smallest a label shrinks to, to fit a narrow margin
_LABEL_PAD_PT = 2.0  # around the digits, inside the label's box
_LABEL_GAP_PT = 3.0  # between a label and the text area, and between stacked labels
_MIN_GAP_PT = 0.75  # what a label keeps from the glyphs in a margin too narrow for the gap
_DIGIT_WIDTH_EM = 0.62  # a bold sans-serif digit's advance, in ems
OVERLAP_BAND_PT = 1.8  # the band under each line of shared characters
START_TICK_PT = 1.2  # the mark of a chunk's first character

# Same line when vertical centres differ by at most this share of the taller glyph;
# new line when the horizontal gap exceeds this many glyph heights (columns, table cells).
_SAME_LINE_CENTRE_SHARE = 0.5
_MAX_GAP_HEIGHTS = 1.5
_MIN_GLYPH_HEIGHT_PT = 1.0
_MAX_CACHED_LAYOUTS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class LineBox:
    """The part of a span on one laid-out line: its characters and their merged box.

    ``[char_start, char_end)`` runs from the first to just past the last character on
    this line that has a box (inserted characters in between are included in the range).
    """

    page: int
    char_start: int
    char_end: int
    bbox_pt: BBox


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkSegment:
    """A maximal run of characters covered by the same set of chunks (indices, ascending)."""

    char_start: int
    char_end: int
    chunk_indices: tuple[int, ...]

    @property
    def is_overlap(self) -> bool:
        return len(self.chunk_indices) > 1


@dataclass(frozen=True, slots=True)
class _Layout:
    positions: np.ndarray  # text indices of characters that have a box, ascending
    pages: np.ndarray  # 1-based page of each such character
    boxes: np.ndarray  # (m, 4) float64 boxes in points
    line_ids: np.ndarray  # non-decreasing; +1 at every new line


_layouts: BoundedCache[str, _Layout] = BoundedCache(_MAX_CACHED_LAYOUTS)  # by sha256


def _line_starts(pages: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """True where a character starts a new line (first character always does).

    Two consecutive characters share a line when they run horizontally (vertical centres
    within half a glyph height, horizontal gap under ``_MAX_GAP_HEIGHTS`` heights) or,
    for text on rotated pages, vertically (the same test with the axes swapped).
    """
    if len(boxes) == 0:
        return np.zeros(0, dtype=bool)
    prev, cur = boxes[:-1], boxes[1:]
    horizontal = _continues(prev, cur, along=0)
    vertical = _continues(prev, cur, along=1)
    new_line = (pages[1:] != pages[:-1]) | ~(horizontal | vertical)
    return np.concatenate([[True], new_line])


def _continues(prev: np.ndarray, cur: np.ndarray, *, along: int) -> np.ndarray:
    """Whether ``cur`` follows ``prev`` on one line running along axis ``along`` (0 = x)."""
    across = 1 - along
    a0, a1, c0, c1 = along, along + 2, across, across + 2
    extent = np.maximum(
        np.maximum(prev[:, c1] - prev[:, c0], cur[:, c1] - cur[:, c0]), _MIN_GLYPH_HEIGHT_PT
    )
    centre_shift = np.abs((cur[:, c0] + cur[:, c1]) - (prev[:, c0] + prev[:, c1])) / 2
    gap = np.maximum(cur[:, a0] - prev[:, a1], prev[:, a0] - cur[:, a1])
    return (centre_shift <= _SAME_LINE_CENTRE_SHARE * extent) & (gap <= _MAX_GAP_HEIGHTS * extent)


def _layout(doc: Document) -> _Layout | None:
    if doc.char_bbox_pt is None or doc.char_page is None:
        return None
    return _layouts.get_or_compute(doc.sha256, lambda: _laid_out(doc))


def _laid_out(doc: Document) -> _Layout:
    """The layout of a document whose characters have boxes (not cached)."""
    assert doc.char_bbox_pt is not None and doc.char_page is not None
    boxes_all = np.asarray(doc.char_bbox_pt, dtype=np.float64)
    pages_all = np.asarray(doc.char_page)
    has_box = np.isfinite(boxes_all).all(axis=1) & (pages_all > 0)
    positions = np.flatnonzero(has_box)
    boxes = boxes_all[positions]
    pages = pages_all[positions].astype(np.int64)
    line_ids = np.cumsum(_line_starts(pages, boxes)) - 1
    return _Layout(positions=positions, pages=pages, boxes=boxes, line_ids=line_ids)


def span_line_boxes(
    doc: Document, char_start: int, char_end: int, *, page: int | None = None
) -> list[LineBox]:
    """One merged box per laid-out line of ``doc.text[char_start:char_end]``.

    Restricted to ``page`` when given. Empty for reflowable documents, for spans of only
    inserted characters, and for pages without a text layer.
    """
    layout = _layout(doc)
    if layout is None or char_end <= char_start:
        return []
    lo = int(np.searchsorted(layout.positions, char_start, side="left"))
    hi = int(np.searchsorted(layout.positions, char_end, side="left"))
    if hi <= lo:
        return []
    positions = layout.positions[lo:hi]
    pages = layout.pages[lo:hi]
    boxes = layout.boxes[lo:hi]
    line_ids = layout.line_ids[lo:hi]
    if page is not None:
        keep = pages == page
        positions, pages, boxes, line_ids = (
            positions[keep],
            pages[keep],
            boxes[keep],
            line_ids[keep],
        )
        if len(positions) == 0:
            return []
    starts = np.flatnonzero(np.concatenate([[True], line_ids[1:] != line_ids[:-1]]))
    ends = np.concatenate([starts[1:], [len(positions)]])
    x0 = np.minimum.reduceat(boxes[:, 0], starts)
    y0 = np.minimum.reduceat(boxes[:, 1], starts)
    x1 = np.maximum.reduceat(boxes[:, 2], starts)
    y1 = np.maximum.reduceat(boxes[:, 3], starts)
    return [
        LineBox(
            page=int(pages[s]),
            char_start=int(positions[s]),
            char_end=int(positions[e - 1]) + 1,
            bbox_pt=(float(x0[i]), float(y0[i]), float(x1[i]), float(y1[i])),
        )
        for i, (s, e) in enumerate(zip(starts, ends, strict=True))
    ]


def block_box(doc: Document, block: Block) -> BBox | None:
    """The block's own box if the parser gave one, else the union of its glyph boxes."""
    if block.bbox_pt is not None:
        return block.bbox_pt
    lines = span_line_boxes(doc, block.char_start, block.char_end, page=block.page)
    return union_of(line.bbox_pt for line in lines)


def blocks_on_page(blocks: Sequence[Block], page: int) -> list[Block]:
    return [b for b in blocks if b.page == page]


def page_span(doc: Document, page: int) -> tuple[int, int]:
    """``[char_start, char_end)`` of a 1-based page in the canonical text."""
    found = doc.pages[page - 1]
    return found.char_start, found.char_end


def chunk_segments(
    spans: Sequence[tuple[int, int]], window_start: int, window_end: int
) -> list[ChunkSegment]:
    """Cut ``[window_start, window_end)`` into runs covered by the same chunks.

    ``spans`` are the chunks' ``(char_start, char_end)``, sorted by start (the order in
    which chunkers emit them); indices in the result refer to positions in ``spans``.
    Characters covered by no chunk produce no segment.
    """
    last = bisect.bisect_left([s for s, _ in spans], window_end)
    candidates = [
        i
        for i in range(last)
        if spans[i][1] > window_start and spans[i][0] < window_end and spans[i][1] > spans[i][0]
    ]
    points = {window_start, window_end}
    for i in candidates:
        points.update((max(spans[i][0], window_start), min(spans[i][1], window_end)))
    ordered = sorted(points)
    segments: list[ChunkSegment] = []
    for a, b in zip(ordered, ordered[1:], strict=False):
        covering = tuple(i for i in candidates if spans[i][0] <= a and spans[i][1] >= b)
        if not covering:
            continue
        last_seg = segments[-1] if segments else None
        if last_seg and last_seg.chunk_indices == covering and last_seg.char_end == a:
            segments[-1] = ChunkSegment(
                char_start=last_seg.char_start, char_end=b, chunk_indices=covering
            )
        else:
            segments.append(ChunkSegment(char_start=a, char_end=b, chunk_indices=covering))
    return segments


def segment_colour(segment: ChunkSegment) -> str:
    """Overlap colour for shared characters, else the owning chunk's alternating colour."""
    if segment.is_overlap:
        return OVERLAP_COLOUR
    return CHUNK_COLOURS[segment.chunk_indices[0] % 2]


@dataclass(frozen=True, slots=True, kw_only=True)
class MarginLabel:
    """Chunk numbers placed in a page margin: ``bbox_pt`` is the label's box, ``anchor_pt``
    the line box it labels (same vertical position unless stacked below a neighbour).
    ``numbers`` are the chunks it names (one, or a run that starts on lines too close to
    label each: ``text`` is then ``first–last``), ``starts_pt`` the line of each start."""

    text: str
    colour: str
    bbox_pt: BBox
    anchor_pt: BBox
    font_pt: float = LABEL_FONT_PT
    numbers: tuple[str, ...] = ()
    starts_pt: tuple[BBox, ...] = ()


def label_size_pt(text: str, font_pt: float = LABEL_FONT_PT) -> tuple[float, float]:
    """Width and height (points) of a label box holding ``text`` at ``font_pt``."""
    pad = _LABEL_PAD_PT * font_pt / LABEL_FONT_PT
    width = _DIGIT_WIDTH_EM * font_pt * max(len(text), 1) + 2 * pad
    return width, font_pt + 1.5 * pad


def _fitted_font_pt(text: str, room_pt: float) -> float:
    """``LABEL_FONT_PT``, or less (not under ``MIN_LABEL_FONT_PT``) so ``text`` fits
    ``room_pt`` points of margin."""
    width, _ = label_size_pt(text)
    if width <= room_pt:
        return LABEL_FONT_PT
    return max(MIN_LABEL_FONT_PT, LABEL_FONT_PT * room_pt / width)


def margin_labels(
    anchors: Sequence[tuple[str, str, BBox]], text_area: BBox, page_width_pt: float
) -> list[MarginLabel]:
    """Labels ``(text, colour, line box)`` placed beside their lines, outside ``text_area``
    (the union of the page's glyph boxes): in the left margin for a line starting left of
    the text area's centre, else in the right margin; a label that would overlap the one
    above it in its margin moves down, by at most its own height: a label that would have
    to move further (many chunks starting on the same or close lines, as tiny chunks do)
    joins the one above instead, which then names the run (``12–15``), so no number ever
    drifts away from its line and a crowded margin never piles up. In a narrow margin a
    label shrinks (to ``MIN_LABEL_FONT_PT``) to keep clear of the glyphs; one narrower
    still (a page printed to its edges) gets the label at the page edge, where it may
    touch them."""
    x0, _, x1, _ = text_area
    middle = (x0 + x1) / 2
    placed: list[MarginLabel] = []
    last: dict[str, int] = {}  # index in ``placed`` of each margin's lowest label
    floor = {"left": float("-inf"), "right": float("-inf")}  # lowest label bottom so far
    for text, colour, line in sorted(anchors, key=lambda a: (a[2][1], a[2][0])):
        side = "left" if line[0] < middle else "right"
        room = x0 if side == "left" else page_width_pt - x1
        _, height = label_size_pt(text, _fitted_font_pt(text, room - _MIN_GAP_PT))
        wanted = (line[1] + line[3] - height) / 2
        top = max(wanted, floor[side] + _LABEL_GAP_PT / 2)
        if side in last and top - wanted > height:  # too far from its line: join the run
            above = placed[last[side]]
            numbers, starts = (*above.numbers, text), (*above.starts_pt, line)
            shown, colour, line = f"{numbers[0]}–{text}", above.colour, above.anchor_pt
            top = above.bbox_pt[1]
        else:
            numbers, starts, shown = (text,), (line,), text
            last[side] = len(placed)
            placed.append(_EMPTY)  # its seat, filled below
        font = _fitted_font_pt(shown, room - _MIN_GAP_PT)
        width, height = label_size_pt(shown, font)
        gap = min(_LABEL_GAP_PT, max(_MIN_GAP_PT, room - width))
        left = (
            max(0.0, x0 - gap - width) if side == "left" else min(page_width_pt - width, x1 + gap)
        )
        box = (left, top, left + width, top + height)
        placed[last[side]] = MarginLabel(
            text=shown, colour=colour, bbox_pt=box, anchor_pt=line, font_pt=font,
            numbers=numbers, starts_pt=starts,
        )  # fmt: skip
        floor[side] = top + height
    return placed


_EMPTY = MarginLabel(text="", colour="", bbox_pt=(0, 0, 0, 0), anchor_pt=(0, 0, 0, 0))


def start_tick(line: BBox) -> BBox:
    """A thin bar at the left edge of ``line``: where a chunk's first character stands."""
    x0, y0, _, y1 = line
    return (x0 - START_TICK_PT / 2, y0, x0 + START_TICK_PT / 2, y1)


def overlap_band(line: BBox) -> BBox:
    """The band under ``line`` that marks its characters as shared by two chunks: below
    the glyph box, so it underlines the text instead of covering it."""
    x0, _, x1, y1 = line
    return (x0, y1, x1, y1 + OVERLAP_BAND_PT)
