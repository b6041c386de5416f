"""Plotly figures of ranks: how chunks move between methods, and why a query failed.

- ``slope_figure``: each chunk a line from its rank under one stage to the next (naive,
  late, a rerank stage...), the biggest movers labelled;
- ``cosine_rank_figure``: cosine against rank per method, so a reader sees how little
  cosine separates rank 3 from rank 300 in a big scope;
- ``rank_scatter_figure``: per query, the first gold rank under one method against another;
- ``cause_bar_figure``: triage causes found so far;
- ``context_coverage_figure``: a document's chunks along its text, coloured by how much
  late-chunking context they had, under its macro-windows.

Ranks are 1-based; a rank of ``None`` (not retrieved within the depth) is drawn in a band
just below the deepest rank, labelled as such. Point ``customdata`` holds the chunk id or
query id, so a click in the app can select it. Document text is escaped before it reaches
a figure. Nothing here imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from core.embed.records import CONTEXT_LEVELS, LateWindow
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


def _layout(fig: go.Figure, *, title: str, height: int, **axes: str) -> go.Figure:
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
    return _layout(fig, title=title, height=420, y="rank (1 = best)")


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
    return _layout(fig, title=f"Cosine against rank{gap}", height=340, x="rank", y="cosine")


def rank_scatter_figure(
    points: Sequence[tuple[str, str, int | None, int | None]],
    *,
    x_method: str,
    y_method: str,
    depth: int,
    selected: str | None = None,
) -> go.Figure:
    """Per query ``(query_id, label, x rank, y rank)``: below the diagonal ``y_method`` ranked
    the gold better. Log axes; ``None`` ranks sit at ``depth + 1`` ("not in the top depth")."""
    far = max(depth + 2, round(depth * 1.8))  # the band of "not in the top depth"
    groups = {"better": ([], UP_COLOUR), "worse": ([], DOWN_COLOUR), "same": ([], SAME_COLOUR)}
    for point in points:
        x, y = (far if r is None else r for r in point[2:])
        groups["better" if y < x else "worse" if y > x else "same"][0].append((point, x, y))
    fig = go.Figure()
    fig.add_scatter(
        x=[1, far], y=[1, far], mode="lines", line={"color": "#c5ced6", "dash": "dash"},
        hoverinfo="skip", showlegend=False,
    )  # fmt: skip
    names = {"better": f"{y_method} better", "worse": f"{y_method} worse", "same": "same rank"}
    for key, (rows, colour) in groups.items():
        if not rows:
            continue
        fig.add_scatter(
            x=[x for _, x, _ in rows],
            y=[y for _, _, y in rows],
            mode="markers",
            name=f"{names[key]} ({len(rows)})",
            marker={
                "size": [14 if p[0] == selected else 9 for p, _, _ in rows],
                "color": colour,
                "line": {
                    "width": [2 if p[0] == selected else 0 for p, _, _ in rows],
                    "color": SELECTED_COLOUR,
                },
                "opacity": 0.8,
            },
            customdata=[p[0] for p, _, _ in rows],
            hovertext=[
                f"{escape(p[0])}: {escape(p[1][:80])}<br>{x_method} {_rank_text(p[2], depth)}, "
                f"{y_method} {_rank_text(p[3], depth)}"
                for p, _, _ in rows
            ],
            hoverinfo="text",
        )
    ticks = [v for v in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if v <= depth] + [far]
    labels = [str(v) for v in ticks[:-1]] + [f"> {depth}"]
    for axis in (fig.update_xaxes, fig.update_yaxes):
        axis(
            type="log", tickvals=ticks, ticktext=labels, tickangle=0,
            range=[-0.08, math.log10(far) + 0.08],
        )  # fmt: skip
    title = f"First gold rank per query: {x_method} against {y_method}"
    return _layout(fig, title=title, height=420, x=f"{x_method} rank", y=f"{y_method} rank")


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
    return _layout(fig, title=f"Causes found so far: {total} tagged{of}", height=280, x="failures")


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
        out.append(
            ChunkContext(
                chunk_id=chunk_id,
                label=" ".join(text.split()[:8]),
                char_start=int(meta["char_start"]),  # type: ignore[call-overload]
                char_end=int(meta["char_end"]),  # type: ignore[call-overload]
                level=str(meta.get("context", "none")) if late else "none",
                token_count=int(meta.get("token_count", 0)),  # type: ignore[call-overload]
                full_context_tokens=int(meta.get("full_context_tokens", 0)),  # type: ignore[call-overload]
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
    along the document's characters; the owned part of each window is drawn solid.

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
    for w in windows:
        row = f"windows {'A' if w.index % 2 == 0 else 'B'}"
        colour = WINDOW_COLOURS[w.index % 2]
        for a, b, opacity, part in (
            (w.char_start, w.char_end, 0.3, "seen"),
            (w.owned_char_start, w.owned_char_end, 0.85, "owned"),
        ):
            fig.add_bar(
                y=[row], x=[max(b - a, 1)], base=[a], orientation="h", showlegend=False,
                marker={"color": colour, "opacity": opacity},
                hovertext=f"window {w.index + 1} ({part}): tokens {w.token_start}-{w.token_end}, "
                f"chars {a}-{b}",
                hoverinfo="text",
            )  # fmt: skip
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(range=[0, max(doc_chars, 1)])
    fig.update_yaxes(categoryorder="array", categoryarray=["chunks", "windows B", "windows A"])
    if len(windows) <= 1:
        title = f"{doc_label}: {doc_tokens:,} tokens, one window (the model takes {limit_tokens})"
    else:
        title = (
            f"{doc_label}: {doc_tokens:,} tokens, over the model limit of {limit_tokens}: "
            f"{len(windows)} macro-windows of {window_tokens}"
        )
    return _layout(fig, title=title, height=260, x="characters of the document")


def _chunk_hover(chunk: ChunkContext) -> str:
    tokens = (
        f"<br>{chunk.full_context_tokens} of {chunk.token_count} tokens with full context"
        if chunk.level != "none"
        else "<br>no late vector"
    )
    return f"{escape(chunk.label)}<br>chars {chunk.char_start}-{chunk.char_end}{tokens}"
