"""Plotly figures of ranks: how chunks move between methods, and how far apart scores are.

- ``slope_figure``: each chunk a line from its rank under one stage to the next (naive,
  late, a rerank stage...), the biggest movers labelled;
- ``score_rank_figure``: score against rank, one panel per method on its own scale (a
  cosine, a BM25 score, a fused score), so a reader sees how little the score separates
  rank 3 from rank 300 in a big scope.

The figures of why a query failed (gold-rank scatter, triage causes) are in
``core.render.failure_charts``, the late-context coverage in ``core.render.context_charts``;
the shared colours in ``core.render.chart_style``.

Ranks are 1-based; a rank of ``None`` (not retrieved within the depth) is drawn in a band
just below the deepest rank, labelled as such. Point ``customdata`` holds the chunk id, so
a click in the app can select it. Document text is escaped before it reaches a figure.
Nothing here imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.methods.spec import ScoreScale
from core.render.chart_style import (
    DOWN_COLOUR,
    SAME_COLOUR,
    SELECTED_COLOUR,
    UP_COLOUR,
    layout,
    method_colour,
    spread,
)
from core.render.markup import escape

# -- rank changes -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SlopeLine:
    """One chunk across stages: ``ranks[i]`` is its rank in stage ``i`` (None: not found)."""

    chunk_id: str
    label: str
    ranks: tuple[int | None, ...]

    def change(self, depth: int) -> int:
        """First rank minus last rank (positive: moved up); see ``rank_step`` for unknowns."""
        return rank_step(self.ranks[0], self.ranks[-1], depth)


def rank_step(before: int | None, after: int | None, depth: int) -> int:
    """``before - after`` (positive: moved up). An unknown rank counts as one deeper than
    ``depth`` or than the other rank, whichever is deeper: not found is never better."""
    floor = max(depth, before or 0, after or 0) + 1
    return (floor if before is None else before) - (floor if after is None else after)


def biggest_movers(lines: Sequence[SlopeLine], depth: int, n: int = 5) -> list[SlopeLine]:
    """The ``n`` lines with the largest absolute change (ties: better final rank first)."""
    moved = [line for line in lines if line.change(depth)]
    moved.sort(key=lambda line: (-abs(line.change(depth)), line.ranks[-1] or depth + 1))
    return moved[:n]


def slope_lines(
    stages: Sequence[str],
    ranks: Mapping[str, Mapping[str, int | None]],
    labels: Mapping[str, str],
    *,
    extra: Mapping[str, int] | None = None,
) -> list[SlopeLine]:
    """Lines of the chunks in ``labels``: ``ranks[chunk_id][stage]`` per stage (a chunk
    missing there has no rank), then ``extra[chunk_id]`` as one more stage when given."""
    lines = []
    for chunk_id, label in labels.items():
        found = ranks.get(chunk_id, {})
        values = tuple(found.get(stage) for stage in stages)
        if extra is not None:
            values += (extra.get(chunk_id),)
        lines.append(SlopeLine(chunk_id=chunk_id, label=label, ranks=values))
    return lines


def _plotted(rank: int | None, depth: int) -> int:
    """Where a rank is drawn: ranks deeper than ``depth`` (or unknown) share one band."""
    return depth + 1 if rank is None or rank > depth else rank


_KEY_COLOURS = {"up": UP_COLOUR, "down": DOWN_COLOUR, "same": SAME_COLOUR}


def _direction(step: int) -> str:
    return "up" if step > 0 else "down" if step < 0 else "same"


LABEL_FONT_PX = 11
_HEIGHT_PX = 420
_BOTTOM_PX = 30  # the stage names under the plot
_PLOT_PX = _HEIGHT_PX - 48 - _BOTTOM_PX  # less the top margin of ``layout``
# Mean advance of a label character at LABEL_FONT_PX, in pixels (generous, so no clipping).
_LABEL_CHAR_PX = 6.6


def slope_figure(
    stages: Sequence[str],
    lines: Sequence[SlopeLine],
    *,
    depth: int,
    n_labelled: int = 5,
    selected: str | None = None,
) -> go.Figure:
    """Rank-change slope chart; rank 1 at the top, ``depth + 1`` = "deeper than ``depth``".

    Each segment (one stage to the next) is coloured by its own direction, so a line can
    be green then red. Segments are three traces (up, down, same) with ``None`` gaps, and
    every chunk's points are one marker trace, ``name="ranks"``, whose ``customdata`` is
    the chunk id of each point (the only trace a click selects). The selected chunk is
    drawn thicker, over a dark outline. The ``n_labelled`` biggest movers and the selected
    chunk get a label (a layout annotation) right of the last stage, moved apart where
    ranks are close; the right margin is sized to the longest label.
    """
    if len(stages) < 2:
        raise ValueError("a slope chart needs at least two stages")
    labelled = {line.chunk_id for line in biggest_movers(lines, depth, n_labelled)}
    fig = go.Figure()
    picked = next((line for line in lines if line.chunk_id == selected), None)
    segments = _segments(stages, [ln for ln in lines if ln is not picked], depth)
    for key, name in (("same", "same rank"), ("down", "moved down"), ("up", "moved up")):
        xs, ys = segments[key]
        fig.add_scatter(
            x=xs, y=ys, mode="lines", name=name, showlegend=False, hoverinfo="skip",
            line={"color": _KEY_COLOURS[key], "width": 2},
        )  # fmt: skip
    if picked is not None:
        ys = [_plotted(r, depth) for r in picked.ranks]
        fig.add_scatter(
            x=list(stages), y=ys, mode="lines", name="selected", showlegend=False,
            hoverinfo="skip", line={"color": SELECTED_COLOUR, "width": 8},
        )  # fmt: skip
        for key, (xs, ys) in _segments(stages, [picked], depth).items():
            if xs:
                fig.add_scatter(
                    x=xs, y=ys, mode="lines", name=f"selected, {key}", showlegend=False,
                    hoverinfo="skip", line={"color": _KEY_COLOURS[key], "width": 4},
                )  # fmt: skip
    _add_points(fig, stages, lines, depth=depth, selected=selected)
    deepest = max((_plotted(r, depth) for line in lines for r in line.ranks), default=1)
    ticks = _rank_ticks(deepest, depth)
    fig.update_yaxes(
        range=[deepest + 0.6, 0.4], tickvals=[t for t, _ in ticks], ticktext=[s for _, s in ticks]
    )
    fig.update_xaxes(
        range=[-0.2, len(stages) - 0.8], categoryorder="array", categoryarray=stages,
        automargin=False,  # a fixed plot height, so the labels' spacing in pixels holds
    )  # fmt: skip
    notes = _mover_notes(
        stages[-1], [ln for ln in lines if ln.chunk_id in labelled or ln is picked],
        depth=depth, px_per_rank=_PLOT_PX / (deepest + 0.2),
    )  # fmt: skip
    title = "Rank under each method: each step green if the chunk moved up, red if down"
    fig = layout(fig, title=title, height=_HEIGHT_PX, y="rank (1 = best)")
    widest = max((len(str(n["text"])) for n in notes), default=0)
    right = 14 + math.ceil(widest * _LABEL_CHAR_PX)
    fig.update_layout(annotations=notes, margin={"r": right, "b": _BOTTOM_PX})
    return fig


def _segments(
    stages: Sequence[str], lines: Sequence[SlopeLine], depth: int
) -> dict[str, tuple[list, list]]:
    """Per direction, the x and y of every segment, ``None`` between segments."""
    out: dict[str, tuple[list, list]] = {"up": ([], []), "down": ([], []), "same": ([], [])}
    for line in lines:
        for i in range(len(stages) - 1):
            step = rank_step(line.ranks[i], line.ranks[i + 1], depth)
            xs, ys = out[_direction(step)]
            xs += [stages[i], stages[i + 1], None]
            ys += [_plotted(line.ranks[i], depth), _plotted(line.ranks[i + 1], depth), None]
    return out


def _add_points(
    fig: go.Figure,
    stages: Sequence[str],
    lines: Sequence[SlopeLine],
    *,
    depth: int,
    selected: str | None,
) -> None:
    """One marker trace of every chunk's points, hover saying the step from the stage before."""
    xs, ys, ids, hover = [], [], [], []
    for line in lines:
        for i, (stage, rank) in enumerate(zip(stages, line.ranks, strict=True)):
            step = "" if i == 0 else _step_text(rank_step(line.ranks[i - 1], rank, depth))
            xs.append(stage)
            ys.append(_plotted(rank, depth))
            ids.append(line.chunk_id)
            shown = "not found" if rank is None else f"rank {rank}"
            hover.append(f"{escape(line.label)}<br>{stage}: {shown}{step}")
    fig.add_scatter(
        x=xs, y=ys, mode="markers", name="ranks", showlegend=False,
        marker={
            "size": [10 if c == selected else 6 for c in ids],
            "color": [SELECTED_COLOUR if c == selected else "#5b7083" for c in ids],
        },
        customdata=ids, hovertext=hover, hoverinfo="text",
    )  # fmt: skip


def _mover_notes(
    stage: str, lines: Sequence[SlopeLine], *, depth: int, px_per_rank: float
) -> list[dict]:
    """Labels right of the last stage, spread apart vertically so none overlap; each says
    the overall change and the label's last heading (the full label is in its hover)."""
    targets = [_plotted(line.ranks[-1], depth) * px_per_rank for line in lines]
    placed = spread(targets, gap=LABEL_FONT_PX + 3, low=0, high=_PLOT_PX)
    notes = []
    for line, target, at in zip(lines, targets, placed, strict=True):
        change = line.change(depth)
        notes.append(
            {
                "x": stage, "y": _plotted(line.ranks[-1], depth), "xanchor": "left",
                "xshift": 8, "yshift": target - at,  # ranks grow downwards, pixels upwards
                "showarrow": False, "text": f"{_arrow(change)} {escape(_short(line.label))}",
                "hovertext": escape(line.label),
                "font": {"size": LABEL_FONT_PX, "color": _KEY_COLOURS[_direction(change)]},
            }
        )  # fmt: skip
    return notes


def _arrow(change: int) -> str:
    return f"▲{change}" if change > 0 else f"▼{-change}" if change < 0 else "="


def _step_text(step: int) -> str:
    return f" ({_arrow(step)} from the stage before)" if step else " (same as the stage before)"


def _short(label: str, limit: int = 26) -> str:
    """The label's last heading (after the last ``›``), cut to ``limit`` characters."""
    tail = label.rsplit("›", 1)[-1].strip() or label
    return tail if len(tail) <= limit else tail[: limit - 1].rstrip() + "…"


def _rank_ticks(deepest: int, depth: int) -> list[tuple[int, str]]:
    step = max(1, math.ceil(min(deepest, depth) / 8))
    ticks = [(r, str(r)) for r in range(1, min(deepest, depth) + 1, step)]
    if deepest > depth:
        ticks.append((depth + 1, f"> {depth}"))
    return ticks


def rank_axis_ticks(longest: int) -> list[int]:
    """Ranks to label on a log rank axis running to ``longest``: 1, 2, 5, 10, 20, 50, ...
    (never past the data, the last rank always labelled)."""
    ticks: list[int] = []
    base = 1
    while base <= longest:
        ticks.extend(t for t in (base, 2 * base, 5 * base) if t <= longest)
        base *= 10
    if longest and ticks[-1] != longest:
        if longest / ticks[-1] < 1.5:
            ticks.pop()  # too close to the last round number to read apart
        ticks.append(longest)
    return ticks


def score_rank_figure(
    curves: Mapping[str, Sequence[float]],
    *,
    scales: Mapping[str, ScoreScale],
    k: int,
    marks: Sequence[tuple[str, int, float, str]] = (),
) -> go.Figure:
    """Score (y) against rank (x), one panel per method on its own score scale
    (``scales[m]``: a cosine, a BM25 score, a fused score); ``curves[m]`` best first.

    ``marks`` are ``(method, rank, score, label)`` points to ring (the selected chunk).
    The shared x axis turns logarithmic when a curve is longer than 100 ranks, with ticks
    at 1, 2, 5, 10, ... up to the longest curve.
    """
    names = list(curves)
    rows = max(1, len(names))
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    longest = max((len(c) for c in curves.values()), default=0)
    for row, method in enumerate(names, start=1):
        scores, label = curves[method], scales[method].label
        hover = f"{escape(method)}: rank %{{x}}, {escape(label)} %{{y:.4f}}<extra></extra>"
        fig.add_scatter(
            x=list(range(1, len(scores) + 1)), y=list(scores),
            mode="lines+markers" if len(scores) <= 60 else "lines", name=method,
            line={"color": method_colour(method), "width": 2}, marker={"size": 5},
            hovertemplate=hover, row=row, col=1,
        )  # fmt: skip
        if 0 < k < len(scores):
            fig.add_vline(x=k, line={"color": "#8a9aa9", "dash": "dot"}, row=row, col=1)
    for method, rank, score, label in marks:
        if method not in names:
            continue
        fig.add_scatter(
            x=[rank], y=[score], mode="markers", name=f"selected ({method})", showlegend=False,
            marker={"size": 14, "color": "rgba(0,0,0,0)",
                    "line": {"width": 3, "color": method_colour(method)}},
            hovertext=f"{escape(label)}<br>{escape(method)}: rank {rank}, score {score:.4f}",
            hoverinfo="text", row=names.index(method) + 1, col=1,
        )  # fmt: skip
    if longest > 100:
        ticks = rank_axis_ticks(longest)
        fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:,}" for t in ticks])
    fig = layout(
        fig, title="Score against rank, each method on its own scale",
        subtitle=f"how far each method's score falls from rank 1 to {k}", height=90 + 150 * rows,
    )  # fmt: skip
    fig.update_xaxes(title_text="rank", row=rows, col=1)
    for row, method in enumerate(names, start=1):
        scores = curves[method]
        title = escape(scales[method].label)
        fig.update_yaxes(title_text=title, title_font={"size": 10}, row=row, col=1)
        fall = f" · falls {scores[0] - scores[min(k, len(scores)) - 1]:.3g}" if scores else ""
        suffix = "" if row == 1 else str(row)
        fig.add_annotation(
            text=f"<b>{escape(method)}</b>{fall}", xref=f"x{suffix} domain",
            yref=f"y{suffix} domain", x=1, y=1.02, xanchor="right", yanchor="bottom",
            showarrow=False, font={"size": 11, "color": method_colour(method)},
        )  # fmt: skip
    fig.update_layout(showlegend=False)
    return fig
