"""Plotly figures of the workbench: document lengths and chunk sizes against the window.

Lengths are in tokens of the configured tokenizer; ``window_tokens`` is the model's
sequence limit (special tokens included), the most a single forward pass sees. Document
names are passed to Plotly as data (Plotly renders them as text, never as HTML markup
beyond its own escaped subset; they are escaped here as well).
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


def _layout(fig: go.Figure, *, title: str, x_title: str, y_title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "font": {"size": 15}},
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=height,
        margin={"l": 10, "r": 10, "t": 48, "b": 10},
        plot_bgcolor="#ffffff",
        bargap=0.15,
        legend={"orientation": "h", "y": -0.2},
    )
    fig.update_xaxes(gridcolor="#eef2f5")
    fig.update_yaxes(gridcolor="#eef2f5")
    return fig


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
    names: Sequence[str], lengths: Sequence[int], window_tokens: int
) -> go.Figure:
    """One bar per document (sorted, log scale) coloured by whether it fits the window,
    with the window and the p50/p90 lengths drawn as lines."""
    order = np.argsort(np.asarray(lengths))
    xs = [escape(names[i]) for i in order]
    ys = [int(lengths[i]) for i in order]
    fits = [y <= window_tokens for y in ys]
    fig = go.Figure()
    for flag, label, colour in (
        (True, "fits the window", FITS_COLOUR),
        (False, "overflows the window", OVERFLOW_COLOUR),
    ):
        idx = [i for i, f in enumerate(fits) if f == flag]
        fig.add_bar(
            x=[xs[i] for i in idx],
            y=[ys[i] for i in idx],
            name=label,
            marker_color=colour,
            hovertemplate="%{x}<br>%{y:,} tokens<extra></extra>",
        )
    # Shapes on a log axis are placed in log10 units.
    fig.add_hline(
        y=math.log10(max(window_tokens, 1)),
        line={"color": WINDOW_COLOUR, "dash": "dash", "width": 2},
        annotation_text=f"model window {window_tokens} tokens",
        annotation_position="top left",
    )
    stats = length_percentiles(ys)
    for name in ("p50", "p90"):
        if name in stats:
            fig.add_hline(
                y=math.log10(max(stats[name], 1)),
                line={"color": "#8a9aa9", "dash": "dot", "width": 1},
                annotation_text=f"{name} {stats[name]:,.0f}",
                annotation_position="bottom right",
            )
    share = overflow_share(ys, window_tokens)
    fig.update_yaxes(type="log")
    fig.update_xaxes(categoryorder="array", categoryarray=xs)
    title = f"Document length in tokens: {share:.0%} of {len(ys)} overflow the model window"
    return _layout(fig, title=title, x_title="", y_title="tokens (log scale)", height=360)


def chunk_size_figure(
    token_counts: Sequence[int], window_tokens: int, *, title: str = "Chunk sizes"
) -> go.Figure:
    """Histogram of chunk sizes in tokens with the model window as a dashed line."""
    counts = np.asarray(token_counts, dtype=int)
    fig = go.Figure()
    fig.add_histogram(
        x=counts[counts <= window_tokens],
        name="fits the window",
        marker_color=FITS_COLOUR,
        nbinsx=30,
        hovertemplate="%{x} tokens: %{y} chunks<extra></extra>",
    )
    over = counts[counts > window_tokens]
    if len(over):
        fig.add_histogram(
            x=over,
            name="over the window",
            marker_color=OVERFLOW_COLOUR,
            nbinsx=10,
            hovertemplate="%{x} tokens: %{y} chunks<extra></extra>",
        )
    fig.add_vline(
        x=window_tokens,
        line={"color": WINDOW_COLOUR, "dash": "dash", "width": 2},
        annotation_text=f"window {window_tokens}",
        annotation_position="top right",
    )
    fig.update_layout(barmode="overlay", showlegend=bool(len(over)))
    return _layout(fig, title=title, x_title="tokens per chunk", y_title="chunks", height=260)
