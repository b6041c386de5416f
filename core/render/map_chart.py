"""The Map page's figure: one panel per method, the same projection in each.

Points are coloured by a group (a document, a heading, a run's gold status), at most
``MAX_GROUPS`` named, the rest "other"; a method's top k are ringed in its panel, the
gold chunks drawn as diamonds, the query as a star. Each point's ``customdata`` is its
chunk id (a click picks the chunk). Hover text is document text: escaped here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.render.chart_style import SELECTED_COLOUR, layout, method_colour
from core.render.markup import escape

MAX_GROUPS = 10
OTHER = "other"
PALETTE = (
    "#2e86ab", "#f18f01", "#3bb273", "#d1495b", "#7768ae", "#a0522d", "#e07a5f",
    "#3d405b", "#81b29a", "#c9a227",
)  # fmt: skip
OTHER_GREY = "#c3ccd4"
GOLD = "#ffb000"
WEBGL_FROM = 3000  # points per panel from which the panels draw with WebGL
STATUS_COLOURS = {"gold, failed": "#d1495b", "gold, found": "#2a9d55", OTHER: OTHER_GREY}


@dataclass(frozen=True, slots=True, kw_only=True)
class MapMarks:
    """What stands out on the map: ``rings[m]`` the rows of method ``m``'s top k (best
    first), ``gold`` the gold rows, ``selected`` the picked row (or None), ``query_xy``
    the query's position (or None)."""

    rings: Mapping[str, Sequence[int]]
    gold: Sequence[int] = ()
    selected: int | None = None
    query_xy: tuple[float, float] | None = None


def named_groups(groups: Sequence[str], fixed: Mapping[str, str] | None = None) -> list[str]:
    """The group names a legend shows, most chunks first: ``fixed``'s keys when given (a
    status grouping), else the ``MAX_GROUPS`` largest."""
    if fixed:
        return [g for g in fixed if g in set(groups)]
    counts = Counter(groups)
    return [g for g, _ in counts.most_common(MAX_GROUPS)]


def map_figure(
    methods: Sequence[str],
    xy: Mapping[str, np.ndarray],
    *,
    ids: Sequence[str],
    groups: Sequence[str],
    hover: Sequence[str],
    marks: MapMarks,
    title: str,
    subtitle: str = "",
    colours: Mapping[str, str] | None = None,
) -> go.Figure:
    """The panels (see the module docstring); ``hover[i]`` is plain text, lines split by
    newlines; ``colours`` fixes a colour per group (else the palette, in legend order)."""
    shown = named_groups(groups, colours)
    colour = dict(colours or zip(shown, PALETTE, strict=False))
    label = [g if g in colour else OTHER for g in groups]
    colour.setdefault(OTHER, OTHER_GREY)
    text = [escape(h).replace("\n", "<br>") for h in hover]
    fig = make_subplots(
        rows=1, cols=len(methods), shared_xaxes=True, shared_yaxes=True,
        subplot_titles=[escape(m) for m in methods], horizontal_spacing=0.03,
    )  # fmt: skip
    scatter = go.Scattergl if len(ids) >= WEBGL_FROM else go.Scatter
    order = [*shown, *([OTHER] if OTHER not in shown and OTHER in label else [])]
    for col, method in enumerate(methods, start=1):
        pos = np.asarray(xy[method])
        for group in order:
            rows = [i for i, g in enumerate(label) if g == group]
            if not rows:
                continue
            fig.add_trace(
                scatter(
                    x=pos[rows, 0], y=pos[rows, 1], mode="markers", name=escape(group),
                    legendgroup=group, showlegend=col == 1,
                    marker={"size": 7, "color": colour[group], "opacity": 0.8,
                            "line": {"width": 0.5, "color": "#ffffff"}},
                    customdata=[[ids[i]] for i in rows], text=[text[i] for i in rows],
                    hovertemplate="%{text}<extra></extra>",
                ),
                row=1, col=col,
            )  # fmt: skip
        _marks(fig, scatter, method, pos, ids, text, marks, col)
    axis = {"showticklabels": False, "zeroline": False, "showgrid": False}
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    layout(fig, title=title, subtitle=subtitle, height=560)
    fig.update_layout(legend={"orientation": "h", "y": -0.04}, clickmode="event+select")
    return fig


def _marks(fig, scatter, method, pos, ids, text, marks: MapMarks, col: int) -> None:
    first = col == 1
    ring = list(marks.rings.get(method, ()))
    if ring:
        fig.add_trace(
            scatter(
                x=pos[ring, 0], y=pos[ring, 1], mode="markers",
                name="top k (each panel its method's)", legendgroup="top k", showlegend=first,
                marker={"size": 15, "color": method_colour(method), "symbol": "circle-open",
                        "line": {"width": 2.4}},  # an open symbol is stroked in its colour
                customdata=[[ids[i]] for i in ring],
                text=[f"#{n} under {escape(method)}<br>{text[i]}" for n, i in enumerate(ring, 1)],
                hovertemplate="%{text}<extra></extra>",
            ),
            row=1, col=col,
        )  # fmt: skip
    gold = list(marks.gold)
    if gold:
        fig.add_trace(
            scatter(
                x=pos[gold, 0], y=pos[gold, 1], mode="markers", name="gold", legendgroup="gold",
                showlegend=first,
                marker={"size": 13, "color": GOLD, "symbol": "diamond",
                        "line": {"width": 1.5, "color": "#7a5200"}},
                customdata=[[ids[i]] for i in gold], text=[f"gold<br>{text[i]}" for i in gold],
                hovertemplate="%{text}<extra></extra>",
            ),
            row=1, col=col,
        )  # fmt: skip
    if marks.selected is not None:
        i = marks.selected
        fig.add_trace(
            scatter(
                x=[pos[i, 0]], y=[pos[i, 1]], mode="markers", name="picked",
                legendgroup="picked", showlegend=first,
                marker={"size": 20, "color": SELECTED_COLOUR, "symbol": "square-open",
                        "line": {"width": 2.6}},
                customdata=[[ids[i]]], text=[f"picked<br>{text[i]}"],
                hovertemplate="%{text}<extra></extra>",
            ),
            row=1, col=col,
        )  # fmt: skip
    if marks.query_xy is not None:
        fig.add_trace(
            go.Scatter(
                x=[marks.query_xy[0]], y=[marks.query_xy[1]], mode="markers", name="query",
                legendgroup="query", showlegend=first,
                marker={"size": 20, "color": "#111111", "symbol": "star",
                        "line": {"width": 1, "color": "#ffffff"}},
                hovertemplate="the query<extra></extra>",
            ),
            row=1, col=col,
        )  # fmt: skip
