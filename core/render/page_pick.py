"""A rendered page with the chunks of one policy as clickable regions (a Plotly figure).

The page image lies under axes in PDF points (origin top-left, y growing downwards, one
unit per point both ways). Each chunk is drawn over its laid-out lines
(``core.render.overlay.span_line_boxes``), alternating colours per chunk as on the Chunks
page, the picked one highlighted. A click lands on an invisible marker: markers sit along
the middle of every line a chunk covers, at most ``STEP_PT`` apart, each carrying that
chunk's id as ``customdata``, so a click anywhere on a chunk's text selects it. Characters
two chunks share (an overlap) belong to the chunk that starts later (the one that does not
hold the text before them). Labels come from documents and are escaped here.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from core.provenance.types import BBox, Document
from core.render.markup import escape
from core.render.overlay import (
    CHUNK_COLOURS,
    HIGHLIGHT_COLOUR,
    HIGHLIGHT_STROKE,
    OVERLAP_COLOUR,
    chunk_segments,
    page_span,
    span_line_boxes,
)
from core.render.pages import DEFAULT_ZOOM, render_page_png

STEP_PT = 6.0  # the most distance between two click markers along a line, in points
PICK_TRACE = "chunks"  # the name of the trace whose points a click selects


@dataclass(frozen=True, slots=True, kw_only=True)
class PickTarget:
    """A chunk that may be picked: its id, its span in ``doc.text`` and a plain label."""

    chunk_id: str
    char_start: int
    char_end: int
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PickLine:
    """One laid-out line of one chunk on the page: which chunk owns a click there, every
    chunk that covers it, and its box in points (top-left origin)."""

    owner: int  # index into the targets
    covering: tuple[int, ...]
    bbox_pt: BBox


def pick_lines(doc: Document, targets: Sequence[PickTarget], page: int) -> list[PickLine]:
    """Every line of ``page`` that some target covers, in text order (``targets`` sorted by
    ``char_start``, as chunkers emit them)."""
    lo, hi = page_span(doc, page)
    spans = [(t.char_start, t.char_end) for t in targets]
    lines = []
    for segment in chunk_segments(spans, lo, hi):
        owner = max(segment.chunk_indices, key=lambda i: (spans[i][0], i))
        for line in span_line_boxes(doc, segment.char_start, segment.char_end, page=page):
            lines.append(
                PickLine(owner=owner, covering=segment.chunk_indices, bbox_pt=line.bbox_pt)
            )
    return lines


def pick_points(lines: Sequence[PickLine]) -> list[tuple[float, float, int]]:
    """``(x_pt, y_pt, line)`` of the click markers (``line`` indexes ``lines``): along the
    middle of each line, none more than ``STEP_PT`` apart, half a step in from its ends."""
    points = []
    for number, line in enumerate(lines):
        x0, y0, x1, y1 = line.bbox_pt
        n = max(1, int((x1 - x0) // STEP_PT) + 1)
        step = (x1 - x0) / n
        points += [(x0 + step * (i + 0.5), (y0 + y1) / 2, number) for i in range(n)]
    return points


def _rects(boxes: Sequence[BBox]) -> tuple[list[float | None], list[float | None]]:
    """Closed outlines of ``boxes`` in one polyline, broken by None between boxes."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for x0, y0, x1, y1 in boxes:
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def _fill_trace(boxes: Sequence[BBox], colour: str, *, opacity: float, name: str) -> go.Scatter:
    xs, ys = _rects(boxes)
    return go.Scatter(
        x=xs, y=ys, mode="lines", fill="toself", fillcolor=colour, opacity=opacity,
        line={"color": colour, "width": 1}, hoverinfo="skip", name=name, showlegend=False,
    )  # fmt: skip


def _hover(targets: Sequence[PickTarget], line: PickLine) -> str:
    target = targets[line.owner]
    also = [targets[i] for i in line.covering if i != line.owner]
    shared = "".join(f"<br>also in {escape(t.label[:60])}" for t in also)
    return (
        f"{escape(target.label[:80])}<br>chars {target.char_start:,}-{target.char_end:,}"
        f"{shared}<br>click: rank this chunk"
    )


def chunk_pick_figure(
    doc: Document,
    targets: Sequence[PickTarget],
    page: int,
    *,
    selected: str | None = None,
    height_px: int = 760,
    zoom: float = DEFAULT_ZOOM,
) -> go.Figure:
    """``page`` of ``doc`` rendered with every target as a clickable region (see the module
    docstring); ``selected`` (a chunk id) is highlighted. Raises ``ChunkscopeError`` when
    MuPDF cannot draw the page."""
    info = doc.pages[page - 1]
    png = render_page_png(doc, page, zoom)
    lines = pick_lines(doc, targets, page)
    fig = go.Figure()
    for parity, colour in enumerate(CHUNK_COLOURS):
        boxes = [ln.bbox_pt for ln in lines if len(ln.covering) == 1 and ln.owner % 2 == parity]
        if boxes:
            fig.add_trace(_fill_trace(boxes, colour, opacity=0.25, name=f"chunk {parity}"))
    if shared := [ln.bbox_pt for ln in lines if len(ln.covering) > 1]:
        fig.add_trace(_fill_trace(shared, OVERLAP_COLOUR, opacity=0.3, name="overlap"))
    picked = [ln.bbox_pt for ln in lines if targets[ln.owner].chunk_id == selected]
    if picked:
        fig.add_trace(_fill_trace(picked, HIGHLIGHT_COLOUR, opacity=0.55, name="picked"))
        fig.data[-1].line.color = HIGHLIGHT_STROKE
    points = pick_points(lines)
    hover = [_hover(targets, ln) for ln in lines]
    fig.add_trace(
        go.Scatter(
            x=[p[0] for p in points], y=[p[1] for p in points], mode="markers",
            marker={"size": 9, "color": "rgba(0,0,0,0)"}, name=PICK_TRACE, showlegend=False,
            customdata=[[targets[lines[p[2]].owner].chunk_id] for p in points],
            hovertext=[hover[p[2]] for p in points],
            hovertemplate="%{hovertext}<extra></extra>",
            selected={"marker": {"opacity": 0}}, unselected={"marker": {"opacity": 0}},
        )
    )  # fmt: skip
    fig.add_layout_image(
        source="data:image/png;base64," + base64.b64encode(png).decode("ascii"),
        xref="x", yref="y", x=0, y=0, sizex=info.width_pt, sizey=info.height_pt,
        xanchor="left", yanchor="top", sizing="stretch", layer="below",
    )  # fmt: skip
    fig.update_xaxes(range=[0, info.width_pt], visible=False, fixedrange=True)
    fig.update_yaxes(
        range=[info.height_pt, 0], visible=False, fixedrange=True, scaleanchor="x", scaleratio=1
    )
    fig.update_layout(
        height=height_px, margin={"l": 0, "r": 0, "t": 0, "b": 0}, plot_bgcolor="#ffffff",
        hovermode="closest", dragmode=False, clickmode="event+select",
    )  # fmt: skip
    return fig
