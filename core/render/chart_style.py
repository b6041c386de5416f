"""Shared look of the Plotly figures in ``core.render``: colours and the common layout.

Colours are CSS hex strings; a method's colour also names its stage (``late+rerank`` takes
the colour of ``rerank``). Titles are escaped here, so a title may hold document text.
Nothing here imports streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core import methods
from core.render.markup import escape

RERANK_COLOUR = "#7768ae"
OTHER_COLOUR = "#2e86ab"
UP_COLOUR = "#2a9d55"
DOWN_COLOUR = "#d1495b"
SAME_COLOUR = "#a7b4c0"
SELECTED_COLOUR = "#1f2933"
CONTEXT_COLOURS: dict[str, str] = {"full": "#2a9d55", "partial": "#f2b134", "none": "#d1495b"}
WINDOW_COLOURS: tuple[str, str] = ("#2e86ab", "#7768ae")
CAUSE_COLOURS: dict[str, str] = {
    "parse": "#a0522d",
    "boundary": "#f18f01",
    "context": "#2e86ab",
    "vocabulary": "#7768ae",
    "label": "#6c757d",
    "method": "#c73e1d",
    "other": "#a7b4c0",
}
GRID = "#eef2f5"


def layout(
    fig: go.Figure, *, title: str, height: int, subtitle: str = "", **axes: str
) -> go.Figure:
    """The shared look; ``title`` and ``subtitle`` are plain text (escaped here)."""
    heading: dict = {"text": escape(title), "x": 0, "font": {"size": 15}}
    if subtitle:
        heading["subtitle"] = {"text": escape(subtitle), "font": {"size": 12}}
    fig.update_layout(
        title=heading,
        height=height,
        margin={"l": 10, "r": 10, "t": 64 if subtitle else 48, "b": 10},
        plot_bgcolor="#ffffff",
        legend={"orientation": "h", "y": -0.18},
        xaxis_title=axes.get("x", ""),
        yaxis_title=axes.get("y", ""),
    )
    fig.update_xaxes(gridcolor=GRID)
    fig.update_yaxes(gridcolor=GRID)
    return fig


def spread(targets: Sequence[float], *, gap: float, low: float, high: float) -> list[float]:
    """Positions as near ``targets`` as can be with at least ``gap`` between any two, kept
    within ``[low, high]`` where there is room (labels on one axis that must not collide;
    any unit, pixels in practice). Returned in the order of ``targets``."""
    order = sorted(range(len(targets)), key=lambda i: targets[i])
    placed = [min(max(targets[i], low), high) for i in order]
    for n in range(1, len(placed)):
        placed[n] = max(placed[n], placed[n - 1] + gap)
    if placed and placed[-1] > high:
        placed[-1] = high
        for n in range(len(placed) - 2, -1, -1):
            placed[n] = min(placed[n], placed[n + 1] - gap)
    out = [0.0] * len(targets)
    for n, i in enumerate(order):
        out[i] = placed[n]
    return out


def method_colour(name: str) -> str:
    """Colour of a method (the registry's) or of a stage such as ``late+rerank`` (by its
    last part)."""
    key = name.split("+")[-1].strip()
    if key == "rerank":
        return RERANK_COLOUR
    try:
        return methods.get(key).colour
    except methods.UnknownMethodError:
        return OTHER_COLOUR
