"""Plotly figures of ranks: how chunks move between methods, and how far apart cosines are.

- ``slope_figure``: each chunk a line from its rank under one stage to the next (naive,
  late, a rerank stage...), the biggest movers labelled;
- ``cosine_rank_figure``: cosine against rank per method, so a reader sees how little
  cosine separates rank 3 from rank 300 in a big scope.

The figures of why a query failed (gold-rank scatter, triage causes, late-context
coverage) are in ``core.render.failure_charts``; the shared colours in
``core.render.chart_style``.

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

from core.render.chart_style import (
    DOWN_COLOUR,
    SAME_COLOUR,
    SELECTED_COLOUR,
    UP_COLOUR,
    layout,
    method_colour,
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
        """First rank minus last rank (positive: moved up); unknown ranks count as depth+1."""
        first, last = (depth + 1 if r is None else r for r in (self.ranks[0], self.ranks[-1]))
        return first - last


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


def slope_figure(
    stages: Sequence[str],
    lines: Sequence[SlopeLine],
    *,
    depth: int,
    n_labelled: int = 5,
    selected: str | None = None,
) -> go.Figure:
    """Rank-change slope chart; rank 1 at the top, ``depth + 1`` = "deeper than ``depth``"."""
    if len(stages) < 2:
        raise ValueError("a slope chart needs at least two stages")
    labelled = {line.chunk_id for line in biggest_movers(lines, depth, n_labelled)}
    fig = go.Figure()
    for line in sorted(lines, key=lambda ln: (ln.chunk_id == selected, ln.chunk_id in labelled)):
        change = line.change(depth)
        colour = UP_COLOUR if change > 0 else DOWN_COLOUR if change < 0 else SAME_COLOUR
        is_selected = line.chunk_id == selected
        ys = [_plotted(r, depth) for r in line.ranks]
        shown = ["—" if r is None else str(r) for r in line.ranks]
        arrow = f"▲{change}" if change > 0 else f"▼{-change}" if change < 0 else "="
        text = [""] * (len(ys) - 1) + [f"{arrow} {escape(_short(line.label))}"]
        fig.add_scatter(
            x=list(stages),
            y=ys,
            mode="lines+markers+text"
            if line.chunk_id in labelled or is_selected
            else "lines+markers",
            line={
                "color": SELECTED_COLOUR if is_selected else colour,
                "width": 4 if is_selected else 2,
            },
            marker={"size": 9 if is_selected else 7},
            text=text,
            textposition="middle right",
            textfont={"size": 11},
            customdata=[line.chunk_id] * len(ys),
            hovertext=[
                f"{escape(line.label)}<br>{stage}: rank {r}"
                for stage, r in zip(stages, shown, strict=True)
            ],
            hoverinfo="text",
            showlegend=False,
        )
    deepest = max((_plotted(r, depth) for line in lines for r in line.ranks), default=1)
    ticks = _rank_ticks(deepest, depth)
    fig.update_yaxes(
        autorange="reversed", tickvals=[t for t, _ in ticks], ticktext=[s for _, s in ticks]
    )
    room = 0.5 + 0.35 * (len(stages) - 1)  # for the movers' labels, right of the last stage
    fig.update_xaxes(range=[-0.2, len(stages) - 1 + room])
    title = "Rank change between stages: green moved up, red moved down"
    return layout(fig, title=title, height=420, y="rank (1 = best)")


def _short(label: str, limit: int = 30) -> str:
    return label if len(label) <= limit else label[: limit - 1].rstrip() + "…"


def _rank_ticks(deepest: int, depth: int) -> list[tuple[int, str]]:
    step = max(1, math.ceil(min(deepest, depth) / 8))
    ticks = [(r, str(r)) for r in range(1, min(deepest, depth) + 1, step)]
    if deepest > depth:
        ticks.append((depth + 1, f"> {depth}"))
    return ticks


def cosine_rank_figure(
    curves: Mapping[str, Sequence[float]],
    *,
    k: int,
    marks: Sequence[tuple[str, int, float, str]] = (),
) -> go.Figure:
    """Cosine (y) against rank (x) per method; ``curves[m]`` are cosines best first.

    ``marks`` are ``(method, rank, cosine, label)`` points to ring (the selected chunk).
    The x axis turns logarithmic when a curve is longer than 100 ranks.
    """
    fig = go.Figure()
    longest = max((len(c) for c in curves.values()), default=0)
    for method, cosines in curves.items():
        fig.add_scatter(
            x=list(range(1, len(cosines) + 1)),
            y=list(cosines),
            mode="lines+markers" if len(cosines) <= 60 else "lines",
            name=method,
            line={"color": method_colour(method), "width": 2},
            marker={"size": 5},
            hovertemplate=f"{method}: rank %{{x}}, cosine %{{y:.4f}}<extra></extra>",
        )
    for method, rank, cosine, label in marks:
        fig.add_scatter(
            x=[rank],
            y=[cosine],
            mode="markers",
            name=f"selected ({method})",
            marker={
                "size": 14,
                "color": "rgba(0,0,0,0)",
                "line": {"width": 3, "color": method_colour(method)},
            },
            hovertext=f"{escape(label)}<br>{method}: rank {rank}, cosine {cosine:.4f}",
            hoverinfo="text",
            showlegend=False,
        )
    if 0 < k < longest:
        fig.add_vline(x=k, line={"color": "#8a9aa9", "dash": "dot"}, annotation_text=f"k = {k}")
    if longest > 100:
        fig.update_xaxes(type="log")
    spread = [c[0] - c[min(k, len(c)) - 1] for c in curves.values() if len(c)]
    gap = f"; the top {k} span {max(spread):.3f} cosine" if spread else ""
    return layout(fig, title=f"Cosine against rank{gap}", height=340, x="rank", y="cosine")
