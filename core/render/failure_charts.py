"""Plotly figures of why a query failed: where the gold ranked and what triage found.

- ``rank_scatter_figure``: per query, the first gold rank under one method against another;
- ``cause_bar_figure``: triage causes found so far.

(A document's late-chunking context coverage is drawn by ``core.render.context_charts``.)
Ranks are 1-based; a rank of ``None`` (not retrieved within the depth) sits in a band
beyond the depth, labelled as such. Point ``customdata`` holds the query id, so a click in
the app can select it. Document text is escaped before it reaches a figure.
Nothing here imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from core.render.chart_style import (
    CAUSE_COLOURS,
    DOWN_COLOUR,
    SAME_COLOUR,
    SELECTED_COLOUR,
    UP_COLOUR,
    layout,
)
from core.render.markup import escape


def rank_scatter_figure(
    points: Sequence[tuple[str, str, int | None, int | None]],
    *,
    x_method: str,
    y_method: str,
    depth: int,
    selected: str | None = None,
) -> go.Figure:
    """Per query ``(query_id, label, x rank, y rank)``: below the diagonal ``y_method`` ranked
    the gold better. Log axes; ``None`` ranks sit at ``depth + 1`` ("not in the top depth").

    Queries at the same drawn point share one marker, its area growing with their count
    and the count written on it; the legend counts queries, not markers. A marker's
    ``customdata`` is the id of the first of its queries in ``points`` order (what a click
    opens; the hover lists the others), or the selected query's id when it is among them."""
    far = max(depth + 2, round(depth * 1.8))  # the band of "not in the top depth"
    groups: dict[str, dict[tuple[int, int], list]] = {"better": {}, "worse": {}, "same": {}}
    for point in points:
        x, y = (far if r is None else r for r in point[2:])
        key = "better" if y < x else "worse" if y > x else "same"
        groups[key].setdefault((x, y), []).append(point)
    fig = go.Figure()
    fig.add_scatter(
        x=[1, far], y=[1, far], mode="lines", line={"color": "#c5ced6", "dash": "dash"},
        hoverinfo="skip", showlegend=False,
    )  # fmt: skip
    names = {"better": f"{y_method} better", "worse": f"{y_method} worse", "same": "same rank"}
    colours = {"better": UP_COLOUR, "worse": DOWN_COLOUR, "same": SAME_COLOUR}
    for key, by_point in groups.items():
        if not by_point:
            continue
        shared = list(by_point.values())
        chosen = [next((p for p in qs if p[0] == selected), qs[0]) for qs in shared]
        picked = [c[0] == selected for c in chosen]
        fig.add_scatter(
            x=[x for x, _ in by_point],
            y=[y for _, y in by_point],
            mode="markers+text",
            name=f"{names[key]} ({sum(len(qs) for qs in shared)})",
            marker={
                "size": [_marker_px(len(qs)) + 5 * p for qs, p in zip(shared, picked, strict=True)],
                "color": colours[key],
                "line": {"width": [2 * p for p in picked], "color": SELECTED_COLOUR},
                "opacity": 0.85,
            },
            text=[str(len(qs)) if len(qs) > 1 else "" for qs in shared],
            textposition="middle center",
            textfont={"size": 10, "color": "#ffffff" if key != "same" else SELECTED_COLOUR},
            customdata=[c[0] for c in chosen],
            hovertext=[
                _point_hover(qs, c, x_method, y_method, depth)
                for qs, c in zip(shared, chosen, strict=True)
            ],
            hoverinfo="text",
        )
    ticks = [v for v in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if v <= depth] + [far]
    labels = [str(v) for v in ticks[:-1]] + [f"> {depth}"]
    for axis in (fig.update_xaxes, fig.update_yaxes):
        axis(
            type="log", tickvals=ticks, ticktext=labels, tickangle=0,
            range=[-0.1, math.log10(far) + 0.1],
        )  # fmt: skip
    title = f"First gold rank per query: {x_method} against {y_method}"
    layout(fig, title=title, height=420, x=f"{x_method} rank", y=f"{y_method} rank")
    return fig.update_layout(legend_itemsizing="constant")  # not the size of a shared marker


def _marker_px(count: int) -> float:
    """Marker diameter for ``count`` queries: area grows with the count, capped at 30 px."""
    return min(9 * math.sqrt(count), 30.0) if count > 1 else 9.0


_HOVER_QUERIES = 6


def _point_hover(
    queries: Sequence[tuple[str, str, int | None, int | None]],
    chosen: tuple[str, str, int | None, int | None],
    x_method: str,
    y_method: str,
    depth: int,
) -> str:
    ranks = f"{x_method} {_rank_text(chosen[2], depth)}, {y_method} {_rank_text(chosen[3], depth)}"
    if len(queries) == 1:
        return f"{escape(chosen[0])}: {escape(chosen[1][:80])}<br>{ranks}"
    listed = [chosen, *(q for q in queries if q is not chosen)][:_HOVER_QUERIES]
    rows = [f"{escape(q[0])}: {escape(q[1][:60])}" for q in listed]
    if len(queries) > len(listed):
        rows.append(f"and {len(queries) - len(listed)} more")
    return (
        f"{len(queries)} queries here: {ranks}<br>" + "<br>".join(rows)
        + f"<br>a click opens {escape(chosen[0])}"
    )  # fmt: skip


def _rank_text(rank: int | None, depth: int) -> str:
    return f"rank {rank}" if rank is not None else f"not in the top {depth}"


def cause_bar_figure(counts: Mapping[str, int], *, n_sampled: int | None = None) -> go.Figure:
    """Tags per cause (in the order given), one bar each."""
    causes = list(counts)
    total = sum(counts.values())
    fig = go.Figure()
    fig.add_bar(
        x=[counts[c] for c in causes],
        y=causes,
        orientation="h",
        marker_color=[CAUSE_COLOURS.get(c, "#2e86ab") for c in causes],
        text=[str(counts[c]) if counts[c] else "" for c in causes],
        textposition="auto",
        hovertemplate="%{y}: %{x} failures<extra></extra>",
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(rangemode="tozero", dtick=1 if total <= 10 else None)
    of = f" of {n_sampled} sampled" if n_sampled is not None else ""
    return layout(fig, title=f"Causes found so far: {total} tagged{of}", height=280, x="failures")


# -- context coverage -------------------------------------------------------------------
