"""Plotly figure of a document's chunks along its text, coloured by how much
late-chunking context each had (``core.store.contexts``), under its macro-windows.
Document text is escaped before it reaches the figure; point ``customdata`` holds the
chunk id, so a click in the app can select it. Nothing here imports streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core.embed.records import CONTEXT_LEVELS, LateWindow
from core.render.chart_style import CONTEXT_COLOURS, SELECTED_COLOUR, WINDOW_COLOURS, layout
from core.render.markup import escape
from core.store.contexts import ChunkContext


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
