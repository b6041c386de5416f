"""The Tune page's figure: metric against chunk size per method, with cost on a second axis.

Each method is a line of its mean (markers at the measured sizes) inside a band of its
bootstrap interval; its index cost at each size (seconds, tokens encoded or vectors, as
asked) is a dotted line of the same colour on the right-hand axis; each crossover between
two methods is a dotted vertical line labelled with the methods. The x axis is
logarithmic, ticked at the measured sizes, its range set from the data (the smallest and
largest size, a little beyond), so a crossover's label never stretches it: Plotly places
an annotation on a log axis at the log10 of its ``x``, a shape at the value itself. A
marker carries ``[policy key, method]`` as ``customdata``, so a click names its cell.
Token sizes past the model's window are shaded, their ticks marked ``past window``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from core.render.chart_style import GRID, layout, method_colour
from core.render.markup import escape
from core.tune.curves import Crossover, Series, past_window

COSTS: dict[str, str] = {
    "seconds": "index seconds",
    "tokens_encoded": "tokens encoded",
    "vectors": "vectors",
}


def _rgba(colour: str, alpha: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _traces(s: Series, cost: str) -> list[dict]:
    colour = method_colour(s.method)
    sizes = list(s.sizes)
    name = escape(s.method)
    costs = [getattr(c, cost) for c in s.costs]
    return [
        {
            "type": "scatter", "mode": "lines", "x": sizes + sizes[::-1],
            "y": list(s.highs) + list(s.lows)[::-1],
            "fill": "toself", "fillcolor": _rgba(colour, 0.15), "line": {"width": 0},
            "hoverinfo": "skip", "showlegend": False, "legendgroup": name,
        },
        {
            "type": "scatter", "mode": "lines+markers", "x": sizes, "y": list(s.means),
            "name": name, "legendgroup": name, "line": {"color": colour, "width": 2},
            "marker": {"size": 9}, "customdata": [[k, s.method] for k in s.policy_keys],
            "hovertemplate": f"{name}<br>size %{{x}}<br>{escape(s.metric)} %{{y:.3f}}"
            "<extra>%{customdata[0]}</extra>",
        },
        {
            "type": "scatter", "mode": "lines", "x": sizes, "y": costs, "yaxis": "y2",
            "name": f"{name} · {COSTS[cost]}", "legendgroup": name,
            "line": {"color": colour, "width": 1, "dash": "dot"}, "hoverinfo": "x+y+name",
        },
    ]  # fmt: skip


def log_range(sizes: Sequence[float]) -> list[float]:
    """The x range (in log10 units, as Plotly takes a log axis's range) that holds every
    size with a margin of a sixth of the span, or of a quarter of a decade for one size."""
    low, high = math.log10(min(sizes)), math.log10(max(sizes))
    pad = (high - low) / 6 if high > low else 0.25
    return [low - pad, high + pad]


def curve_figure(
    series: Sequence[Series],
    crossings: Sequence[Crossover],
    *,
    unit: str,
    cost: str = "seconds",
    title: str = "",
    window: int | None = None,
) -> go.Figure:
    """Curves of one metric for one policy and overlap (``unit`` names the size unit).
    ``window``: the model's content tokens; token sizes past it are shaded and their
    ticks say ``past window`` (the encoder cuts such chunks)."""
    data = [t for s in series for t in _traces(s, cost)]
    sizes = sorted({x for s in series for x in s.sizes})
    shapes, notes = [], []
    past = [x for x in sizes if past_window(x, unit, window)]
    if past and window is not None:
        shapes.append({
            "type": "rect", "xref": "x", "yref": "paper", "x0": window,
            "x1": 10 ** log_range(sizes)[1], "y0": 0, "y1": 1, "line": {"width": 0},
            "fillcolor": "rgba(51,71,91,0.08)", "layer": "below",
        })  # fmt: skip
        notes.append({
            "x": math.log10(window), "xref": "x", "y": 0.02, "yref": "paper",
            "xanchor": "left", "showarrow": False, "font": {"size": 11},
            "text": escape(f"past the model's window ({window:,} tokens): cut when embedded"),
        })  # fmt: skip
    for i, c in enumerate(crossings):
        shapes.append({
            "type": "line", "xref": "x", "yref": "paper", "x0": c.size, "x1": c.size,
            "y0": 0, "y1": 1, "line": {"color": "#33475b", "dash": "dot", "width": 1},
        })  # fmt: skip
        notes.append({
            "x": math.log10(c.size), "xref": "x", "y": 1 - 0.07 * i, "yref": "paper",
            "showarrow": False,
            "text": escape(f"{c.better_below} > {c.other} below {c.size:,.0f}"),
            "font": {"size": 11}, "bgcolor": "rgba(255,255,255,0.8)",
        })  # fmt: skip
    fig = go.Figure({"data": data, "layout": {"shapes": shapes, "annotations": notes}})
    metric = series[0].metric if series else ""
    layout(fig, title=title or f"{metric} against chunk size", height=460,
           x=f"chunk size ({unit}, log scale)", y=metric)  # fmt: skip
    fig.update_layout(
        xaxis={"type": "log", "tickvals": sizes,
               "ticktext": [f"{s}<br>past window" if s in past else str(s) for s in sizes],
               **({"range": log_range(sizes)} if sizes else {})},
        yaxis2={"overlaying": "y", "side": "right", "title": COSTS[cost], "showgrid": False,
                "rangemode": "tozero"},
        hovermode="closest", clickmode="event+select",
    )  # fmt: skip
    fig.update_yaxes(gridcolor=GRID)
    return fig
