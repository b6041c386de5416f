"""Plotly figures of why a query failed: where the gold ranked, what triage found, and how
much late-chunking context each chunk of a document had.

- ``rank_scatter_figure``: per query, the first gold rank under one method against another;
- ``cause_bar_figure``: triage causes found so far;
- ``context_coverage_figure``: a document's chunks along its text, coloured by how much
  late-chunking context they had, under its macro-windows.

Ranks are 1-based; a rank of ``None`` (not retrieved within the depth) sits in a band
beyond the depth, labelled as such. Point ``customdata`` holds the query id or chunk id,
so a click in the app can select it. Document text is escaped before it reaches a figure.
Nothing here imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from core.embed.records import CONTEXT_LEVELS, LateWindow
from core.render.chart_style import (
    CAUSE_COLOURS,
    CONTEXT_COLOURS,
    DOWN_COLOUR,
    SAME_COLOUR,
    SELECTED_COLOUR,
    UP_COLOUR,
    WINDOW_COLOURS,
    layout,
)
from core.render.markup import escape
from core.serial import Fields


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkContext:
    """A chunk's span and its late-chunking context: ``level`` is full, partial or none
    (none: the chunk has no late vector, e.g. late is not indexed or the model is CLS)."""

    chunk_id: str
    label: str
    char_start: int
    char_end: int
    level: str
    token_count: int = 0
    full_context_tokens: int = 0

    def __post_init__(self) -> None:
        if self.level not in CONTEXT_LEVELS:
            raise ValueError(f"unknown context level {self.level!r}")


def chunk_contexts(
    ids: Sequence[str],
    metadatas: Sequence[Mapping[str, object]],
    texts: Sequence[str],
    *,
    late: bool,
) -> list[ChunkContext]:
    """Stored records (``ChunkStore.scope_records``) as ``ChunkContext``; records of another
    method than late (``late=False``) have no late context: level ``none``."""
    out = []
    for chunk_id, meta, text in zip(ids, metadatas, texts, strict=True):
        fields = Fields(meta, f"record {chunk_id}")
        out.append(
            ChunkContext(
                chunk_id=chunk_id,
                label=" ".join(text.split()[:8]),
                char_start=fields.integer("char_start"),
                char_end=fields.integer("char_end"),
                level=fields.string("context", "none") if late else "none",
                token_count=fields.integer("token_count", 0),
                full_context_tokens=fields.integer("full_context_tokens", 0),
            )
        )
    return out


def context_counts(chunks: Sequence[ChunkContext]) -> dict[str, int]:
    """Chunks per context level, every level present."""
    return {level: sum(c.level == level for c in chunks) for level in CONTEXT_LEVELS}


def context_coverage_figure(
    *,
    doc_label: str,
    doc_chars: int,
    doc_tokens: int,
    window_tokens: int,
    limit_tokens: int,
    windows: Sequence[LateWindow],
    chunks: Sequence[ChunkContext],
    selected: str | None = None,
) -> go.Figure:
    """Chunks (bottom row) and macro-windows (rows above, alternating so overlaps show)
    along the document's characters; the owned part of each window is drawn solid, with
    its 1-based number (as the app numbers windows) written on it. Rows are named by
    those numbers ("window 1"; "windows 1, 3 … 9") and only rows with a window are drawn.

    ``window_tokens`` is the macro-window late chunking used on this document and
    ``limit_tokens`` the most the model takes in one pass (content tokens, both)."""
    fig = go.Figure()
    for level in CONTEXT_LEVELS:
        picked = [c for c in chunks if c.level == level]
        if not picked:
            continue
        fig.add_bar(
            y=["chunks"] * len(picked),
            x=[max(c.char_end - c.char_start, 1) for c in picked],
            base=[c.char_start for c in picked],
            orientation="h",
            name=f"{level} context ({len(picked)})",
            marker={
                "color": CONTEXT_COLOURS[level],
                "line": {
                    "width": [3 if c.chunk_id == selected else 0.5 for c in picked],
                    "color": [
                        SELECTED_COLOUR if c.chunk_id == selected else "#ffffff" for c in picked
                    ],
                },
            },
            customdata=[c.chunk_id for c in picked],
            hovertext=[_chunk_hover(c) for c in picked],
            hoverinfo="text",
        )
    rows = _window_rows(windows)
    for w in windows:
        row, colour = rows[w.index % 2], WINDOW_COLOURS[w.index % 2]
        for a, b, opacity, part in (
            (w.char_start, w.char_end, 0.3, "seen"),
            (w.owned_char_start, w.owned_char_end, 0.85, "owned"),
        ):
            fig.add_bar(
                y=[row], x=[max(b - a, 1)], base=[a], orientation="h", showlegend=False,
                marker={"color": colour, "opacity": opacity},
                text=[str(w.index + 1) if part == "owned" else ""], textposition="inside",
                insidetextanchor="middle", textfont={"color": "#ffffff", "size": 11},
                hovertext=f"window {w.index + 1} ({part}): tokens {w.token_start}-{w.token_end}, "
                f"chars {a}-{b}",
                hoverinfo="text",
            )  # fmt: skip
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(range=[0, max(doc_chars, 1)])
    fig.update_yaxes(categoryorder="array", categoryarray=["chunks", *reversed(rows.values())])
    if len(windows) <= 1:
        title = f"{doc_label}: {doc_tokens:,} tokens, one window (the model takes {limit_tokens})"
    else:
        title = (
            f"{doc_label}: {doc_tokens:,} tokens, over the model limit of {limit_tokens}: "
            f"{len(windows)} macro-windows of {window_tokens}"
        )
    height = 170 + 45 * len(rows)
    return layout(fig, title=title, height=height, x="characters of the document")


def _window_rows(windows: Sequence[LateWindow]) -> dict[int, str]:
    """Row name per window parity (``index % 2``), top row first, by the 1-based numbers
    the app shows; windows alternate between two rows so overlaps show, and a row with no
    window is left out."""
    rows = {}
    for parity in (0, 1):
        numbers = [str(w.index + 1) for w in windows if w.index % 2 == parity]
        if len(numbers) == 1:
            rows[parity] = f"window {numbers[0]}"
        elif 1 < len(numbers) <= 3:
            rows[parity] = f"windows {', '.join(numbers[:-1])} and {numbers[-1]}"
        elif numbers:
            rows[parity] = f"windows {numbers[0]}, {numbers[1]} … {numbers[-1]}"
    return rows


def _chunk_hover(chunk: ChunkContext) -> str:
    tokens = (
        f"<br>{chunk.full_context_tokens} of {chunk.token_count} tokens with full context"
        if chunk.level != "none"
        else "<br>no late vector"
    )
    return f"{escape(chunk.label)}<br>chars {chunk.char_start}-{chunk.char_end}{tokens}"
