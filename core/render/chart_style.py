"""Shared look of the Plotly figures in ``core.render``: colours and the common layout.

Colours are CSS hex strings; a method's colour also names its stage (``late+rerank`` takes
the colour of ``rerank``). Titles are escaped here, so a title may hold document text.
Nothing here imports streamlit.
"""

from __future__ import annotations

import plotly.graph_objects as go

from core.render.markup import escape

METHOD_COLOURS: dict[str, str] = {
    "naive": "#5b7083",
    "late": "#f18f01",
    "contextual": "#3bb273",
    "rerank": "#7768ae",
}
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
    "other": "#a7b4c0",
}
GRID = "#eef2f5"


def layout(fig: go.Figure, *, title: str, height: int, **axes: str) -> go.Figure:
    fig.update_layout(
        title={"text": escape(title), "x": 0, "font": {"size": 15}},
        height=height,
        margin={"l": 10, "r": 10, "t": 48, "b": 10},
        plot_bgcolor="#ffffff",
        legend={"orientation": "h", "y": -0.18},
        xaxis_title=axes.get("x", ""),
        yaxis_title=axes.get("y", ""),
    )
    fig.update_xaxes(gridcolor=GRID)
    fig.update_yaxes(gridcolor=GRID)
    return fig


def method_colour(name: str) -> str:
    """Colour of a method (or a stage such as ``late+rerank``, by its last part)."""
    key = name.split("+")[-1].strip()
    return METHOD_COLOURS.get(key, METHOD_COLOURS.get(name, "#2e86ab"))
