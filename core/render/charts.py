"""Plotly figures of the workbench: document lengths and chunk sizes against the window.

Lengths are in tokens of the configured tokenizer; ``window_tokens`` is the model's
sequence limit (special tokens included), the most a single forward pass sees. Document
names are passed to Plotly as data (Plotly renders them as text, never as HTML markup
beyond its own escaped subset; they are escaped here as well).

Figures are built as plain dicts and wrapped in ``go.Figure`` once: the builder methods
(``add_vline`` and friends) cost ~60 ms a figure, too slow for a slider.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.render.markup import escape
from core.render.overlay import CHUNK_COLOURS, OVERLAP_COLOUR

FITS_COLOUR = CHUNK_COLOURS[0]
OVERFLOW_COLOUR = OVERLAP_COLOUR
WINDOW_COLOUR = "#33475b"


def _line(axis: str, value: float, colour: str, dash: str, width: float) -> dict:
    """A full-width (``axis="y"``) or full-height (``axis="x"``) line at ``value``."""
    other = "x" if axis == "y" else "y"
    return {
        "type": "line",
        f"{axis}ref": axis,
        f"{other}ref": "paper",
        f"{axis}0": value,
        f"{axis}1": value,
        f"{other}0": 0,
        f"{other}1": 1,
        "line": {"color": colour, "dash": dash, "width": width},
    }


def _note(axis: str, value: float, text: str, *, at_end: bool) -> dict:
    other = "x" if axis == "y" else "y"
    return {
        "text": text,
        f"{axis}ref": axis,
        f"{other}ref": "paper",
        axis: value,
        other: 1 if at_end else 0,
        "showarrow": False,
        "xanchor": "left" if axis == "x" else ("right" if at_end else "left"),
        "yanchor": "bottom",
        "font": {"size": 11, "color": WINDOW_COLOUR},
    }


def _figure(data: list[dict], *, title: str, x_title: str, y_title: str, height: int, **layout):
    grid = {"gridcolor": "#eef2f5"}
    return go.Figure(
        {
            "data": data,
            "layout": {
                "title": {"text": title, "x": 0, "y": 0.98, "yanchor": "top", "font": {"size": 15}},
                "xaxis": {**grid, "title": {"text": x_title}, **layout.pop("xaxis", {})},
                "yaxis": {**grid, "title": {"text": y_title}, **layout.pop("yaxis", {})},
                "height": height,
                "margin": {"l": 10, "r": 10, "t": 76, "b": 10},
                "plot_bgcolor": "#ffffff",
                "bargap": 0.15,
                # Between the title and the plot, clear of annotations on the plot's edge.
                "legend": {
                    "orientation": "h",
                    "yref": "container",
                    "y": 1 - 34 / height,
                    "yanchor": "top",
                    "x": 0,
                    "xanchor": "left",
                },
                **layout,
            },
        }
    )


def _log_range(values: Sequence[float]) -> list[float]:
    """A log-axis range (log10 units) holding every value with some room around it."""
    low, high = max(min(values), 1), max(max(values), 1)
    return [math.log10(low) - 0.3, math.log10(high) + 0.15]


def overflow_share(lengths: Sequence[int], window_tokens: int) -> float:
    """Share (0-1) of ``lengths`` longer than ``window_tokens``; 0 for no documents."""
    if not lengths:
        return 0.0
    return float(np.mean(np.asarray(lengths) > window_tokens))


def length_percentiles(lengths: Sequence[int]) -> dict[str, float]:
    """p10, p50, p90 and max of ``lengths`` (empty dict for no documents)."""
    if not lengths:
        return {}
    values = np.asarray(lengths, dtype=float)
    found = {f"p{q}": float(np.percentile(values, q)) for q in (10, 50, 90)}
    found["max"] = float(values.max())
    return found


def document_lengths_figure(
    names: Sequence[str],
    lengths: Sequence[int],
    window_tokens: int,
    *,
    chunk_window_tokens: int | None = None,
) -> go.Figure:
    """One bar per document (sorted, log scale) coloured by whether it fits
    ``window_tokens`` (one late-chunking pass), with that window, the per-chunk limit
    ``chunk_window_tokens`` (when given) and the p50/p90 lengths drawn as lines."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    xs = [escape(names[i]) for i in order]
    ys = [int(lengths[i]) for i in order]
    bars = []
    for fits, label, colour in (
        (True, "fits one pass", FITS_COLOUR),
        (False, "needs macro-windows", OVERFLOW_COLOUR),
    ):
        idx = [i for i, y in enumerate(ys) if (y <= window_tokens) == fits]
        bars.append(
            {
                "type": "bar",
                "x": [xs[i] for i in idx],
                "y": [ys[i] for i in idx],
                "name": label,
                "marker": {"color": colour},
                "hovertemplate": "%{x}<br>%{y:,} tokens<extra></extra>",
            }
        )
    # On a log axis, shapes take data values but annotations take log10 of them.
    shapes = [_line("y", window_tokens, WINDOW_COLOUR, "dash", 2)]
    notes = [
        _note("y", math.log10(max(window_tokens, 1)), f"one pass {window_tokens} tokens",
              at_end=False)
    ]  # fmt: skip
    if chunk_window_tokens is not None:
        shapes.append(_line("y", chunk_window_tokens, WINDOW_COLOUR, "dot", 1))
        notes.append(_note("y", math.log10(max(chunk_window_tokens, 1)),
                           f"chunk limit {chunk_window_tokens}", at_end=False))  # fmt: skip
    for name, value in length_percentiles(ys).items():
        if name in ("p50", "p90"):
            shapes.append(_line("y", value, "#8a9aa9", "dot", 1))
            notes.append(_note("y", math.log10(max(value, 1)), f"{name} {value:,.0f}", at_end=True))
    title = (
        f"Document length in tokens: {overflow_share(ys, window_tokens):.0%} of {len(ys)} "
        "too long for one pass"
    )
    return _figure(
        bars, title=title, x_title="", y_title="tokens (log scale)", height=360,
        xaxis={"categoryorder": "array", "categoryarray": xs},
        yaxis={"type": "log", "range": _log_range([*ys, window_tokens])},
        shapes=shapes, annotations=notes,
    )  # fmt: skip


def chunk_size_figure(
    token_counts: Sequence[int], window_tokens: int, *, title: str = "Chunk sizes"
) -> go.Figure:
    """Histogram of chunk sizes in tokens with the model window as a dashed line."""
    counts = np.asarray(token_counts, dtype=int)
    over = counts[counts > window_tokens]
    hover = "%{x} tokens: %{y} chunks<extra></extra>"
    data = [
        {"type": "histogram", "x": counts[counts <= window_tokens].tolist(), "nbinsx": 30,
         "name": "fits the window", "marker": {"color": FITS_COLOUR}, "hovertemplate": hover},
    ]  # fmt: skip
    if len(over):
        data.append(
            {"type": "histogram", "x": over.tolist(), "nbinsx": 10, "name": "over the window",
             "marker": {"color": OVERFLOW_COLOUR}, "hovertemplate": hover}
        )  # fmt: skip
    return _figure(
        data, title=title, x_title="tokens per chunk", y_title="chunks", height=260,
        barmode="overlay", showlegend=bool(len(over)),
        shapes=[_line("x", window_tokens, WINDOW_COLOUR, "dash", 2)],
        annotations=[_note("x", window_tokens, f"window {window_tokens}", at_end=True)],
    )  # fmt: skip
