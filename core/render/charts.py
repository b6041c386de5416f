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

from core.render.chart_style import spread
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
                "margin": layout.pop("margin", {"l": 10, "r": 10, "t": 76, "b": 10}),
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


def log_ticks(y_range: Sequence[float]) -> tuple[list[float], list[str]]:
    """Tick values and labels for a log axis over ``y_range`` (log10 units): 1, 2, 5 of
    every decade when the range spans at most two decades, else powers of ten, written in
    full with thousands separators ("1,000", "20,000"), never Plotly's "2, 10k, 5"."""
    low, high = 10 ** y_range[0], 10 ** y_range[1]
    steps = (1, 2, 5) if y_range[1] - y_range[0] <= 2.5 else (1,)
    values = [
        float(m * 10**e)
        for e in range(math.floor(y_range[0]), math.ceil(y_range[1]) + 1)
        for m in steps
        if low <= m * 10**e <= high
    ]
    return values, [f"{v:,.0f}" for v in values]


def overflow_share(lengths: Sequence[int], window_tokens: int) -> float:
    """Share (0-1) of the documents with text (length > 0) longer than ``window_tokens``;
    0 for none. A document without text (a scan with no text layer) has nothing to chunk,
    so it is neither "fits" nor "too long" and is left out of the share."""
    with_text = [n for n in lengths if n > 0]
    if not with_text:
        return 0.0
    return float(np.mean(np.asarray(with_text) > window_tokens))


def length_percentiles(lengths: Sequence[int]) -> dict[str, float]:
    """p10, p50, p90 and max of the lengths above 0: documents without text are left out,
    as in ``overflow_share``; all 0 when no document has text, an empty dict for none."""
    if not lengths:
        return {}
    values = np.asarray([n for n in lengths if n > 0] or [0], dtype=float)
    found = {f"p{q}": float(np.percentile(values, q)) for q in (10, 50, 90)}
    found["max"] = float(values.max())
    return found


NO_TEXT_COLOUR = "#a7b4c0"
_LENGTHS_HEIGHT_PX = 360
_TOP_PX = 76
_NAME_CHARS = 14  # document names under the bars are cut to this, full in the hover


def document_lengths_figure(
    names: Sequence[str],
    lengths: Sequence[int],
    window_tokens: int,
    *,
    chunk_window_tokens: int | None = None,
) -> go.Figure:
    """One bar per document (sorted, log scale) coloured by whether it fits
    ``window_tokens`` (one late-chunking pass), with that window, the per-chunk limit
    ``chunk_window_tokens`` (when given) and the p50/p90 lengths drawn as lines.

    Lines are labelled right of the plot, moved apart so no two labels overlap whatever
    the values. A document of 0 tokens (no text layer) cannot sit on a log axis: it is
    drawn as a short grey stub at the floor, in its own legend entry "no text", its hover
    saying 0 tokens; it is left out of the percentiles and the share too long (see
    ``overflow_share``), and the title counts it apart."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    xs = [escape(names[i]) for i in order]
    ys = [int(lengths[i]) for i in order]
    with_text = [y for y in ys if y > 0]
    y_range = _log_range([*with_text, window_tokens])
    bottom_px = 80 if len(xs) <= 60 else 20  # room for the names, cut and turned 45°
    plot_px = _LENGTHS_HEIGHT_PX - _TOP_PX - bottom_px
    stub = 10 ** (y_range[0] + 12 / plot_px * (y_range[1] - y_range[0]))
    bars = [
        _length_bars(xs, ys, lambda y: 0 < y <= window_tokens, "fits one pass", FITS_COLOUR),
        _length_bars(xs, ys, lambda y: y > window_tokens, "needs macro-windows", OVERFLOW_COLOUR),
    ]
    no_text = [i for i, y in enumerate(ys) if y <= 0]
    if no_text:
        bars.append(
            {"type": "bar", "x": [xs[i] for i in no_text], "y": [stub] * len(no_text),
             "name": f"no text ({len(no_text)})", "marker": {"color": NO_TEXT_COLOUR},
             "hovertemplate": "%{x}<br>0 tokens: no text layer<extra></extra>"}
        )  # fmt: skip
    lines: list[tuple[float, str, str, str, float]] = [
        (window_tokens, f"one pass {window_tokens}", WINDOW_COLOUR, "dash", 2)
    ]
    if chunk_window_tokens is not None:
        lines.append((chunk_window_tokens, f"chunk limit {chunk_window_tokens}", WINDOW_COLOUR,
                      "dot", 1))  # fmt: skip
    for name, value in length_percentiles(with_text).items():
        if name in ("p50", "p90"):
            lines.append((value, f"{name} {value:,.0f}", "#6b7b8a", "dot", 1))
    shapes, notes = _labelled_lines(lines, y_range, plot_px)
    title = (
        f"Document length in tokens: {overflow_share(ys, window_tokens):.0%} of "
        f"{len(with_text)} too long for one pass"
    )
    if no_text:
        title += f"; {len(no_text)} without text"
    widest = max(len(n["text"]) for n in notes)
    ticks = log_ticks(y_range)
    return _figure(
        bars, title=title, x_title="", y_title="tokens (log scale)", height=_LENGTHS_HEIGHT_PX,
        xaxis={"categoryorder": "array", "categoryarray": xs, "tickvals": xs,
               "ticktext": [escape(_cut(names[i], _NAME_CHARS)) for i in order],
               "tickangle": -45, "automargin": False, "showticklabels": bottom_px > 20},
        yaxis={"type": "log", "range": y_range, "tickvals": ticks[0], "ticktext": ticks[1]},
        margin={"l": 10, "r": 16 + math.ceil(6.6 * widest), "t": _TOP_PX, "b": bottom_px},
        shapes=shapes, annotations=notes,
    )  # fmt: skip


def _length_bars(xs: list[str], ys: list[int], keep, label: str, colour: str) -> dict:
    idx = [i for i, y in enumerate(ys) if keep(y)]
    return {
        "type": "bar",
        "x": [xs[i] for i in idx],
        "y": [ys[i] for i in idx],
        "name": label,
        "marker": {"color": colour},
        "hovertemplate": "%{x}<br>%{y:,} tokens<extra></extra>",
    }


def _labelled_lines(
    lines: list[tuple[float, str, str, str, float]], y_range: list[float], plot_px: float
) -> tuple[list[dict], list[dict]]:
    """Full-width lines at token values on the log y axis, each labelled right of the plot;
    labels are moved apart (``yshift``, pixels) so none overlap. On a log axis, shapes take
    data values but annotations take log10 of them."""
    px_per_decade = plot_px / (y_range[1] - y_range[0])
    targets = [(math.log10(max(v, 1)) - y_range[0]) * px_per_decade for v, *_ in lines]
    placed = spread(targets, gap=14, low=0, high=plot_px)
    shapes, notes = [], []
    for (value, text, colour, dash, width), target, at in zip(lines, targets, placed, strict=True):
        shapes.append(_line("y", value, colour, dash, width))
        notes.append(
            {"text": text, "xref": "paper", "x": 1, "xanchor": "left", "xshift": 4,
             "yref": "y", "y": math.log10(max(value, 1)), "yanchor": "middle",
             "yshift": at - target, "showarrow": False, "font": {"size": 11, "color": colour}}
        )  # fmt: skip
    return shapes, notes


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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
