"""Figures of ranks: what each one draws, where unknown ranks go, and that labels from
documents reach them escaped."""

from __future__ import annotations

import json

import pytest

from core.embed.records import LateWindow
from core.render.chart_style import CONTEXT_COLOURS
from core.render.failure_charts import (
    ChunkContext,
    cause_bar_figure,
    chunk_contexts,
    context_counts,
    context_coverage_figure,
    rank_scatter_figure,
)
from core.render.rank_charts import (
    SlopeLine,
    biggest_movers,
    cosine_rank_figure,
    slope_figure,
    slope_lines,
)

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def figure_text(fig) -> str:
    return json.dumps(fig.to_plotly_json(), default=str)


def assert_escaped(fig) -> None:
    text = figure_text(fig)
    assert "<script" not in text and "<img" not in text
    assert "&lt;script&gt;" in text


def test_slope_lines_follow_the_stages_and_add_the_rerank_stage():
    ranks = {"a": {"naive": 4, "late": 1}, "b": {"naive": 1, "late": None}}
    lines = slope_lines(["naive", "late"], ranks, {"a": "A", "b": "B", "c": "C"}, extra={"a": 2})
    assert [(ln.chunk_id, ln.ranks) for ln in lines] == [
        ("a", (4, 1, 2)),
        ("b", (1, None, None)),
        ("c", (None, None, None)),
    ]


def test_biggest_movers_rank_by_absolute_change_and_count_unknown_as_deeper():
    lines = [
        SlopeLine(chunk_id="up", label="u", ranks=(9, 1)),
        SlopeLine(chunk_id="gone", label="g", ranks=(2, None)),  # 2 -> 31 with depth 30
        SlopeLine(chunk_id="same", label="s", ranks=(3, 3)),
        SlopeLine(chunk_id="down", label="d", ranks=(1, 4)),
    ]
    assert [ln.chunk_id for ln in biggest_movers(lines, depth=30, n=3)] == ["gone", "up", "down"]
    assert lines[1].change(30) == -29 and lines[0].change(30) == 8


def test_slope_figure_labels_movers_reverses_ranks_and_escapes():
    lines = [
        SlopeLine(chunk_id="c1", label=EVIL, ranks=(12, 1)),
        SlopeLine(chunk_id="c2", label="steady", ranks=(2, 2)),
        SlopeLine(chunk_id="c3", label="deep", ranks=(3, 250)),
        SlopeLine(chunk_id="c4", label="small move", ranks=(5, 6)),
    ]
    fig = slope_figure(["naive", "late"], lines, depth=30, n_labelled=2, selected="c2")
    assert fig.layout.yaxis.autorange == "reversed"
    by_id = {t.customdata[0]: t for t in fig.data}
    assert set(by_id) == {"c1", "c2", "c3", "c4"}
    assert list(by_id["c3"].y) == [3, 31]  # deeper than the depth: the "> 30" band
    assert "> 30" in fig.layout.yaxis.ticktext
    assert "text" in by_id["c1"].mode and by_id["c1"].text[-1].startswith("▲11")
    assert by_id["c3"].text[-1].startswith("▼247")
    assert "text" not in by_id["c4"].mode  # not among the n_labelled movers
    assert by_id["c2"].line.width > by_id["c1"].line.width  # the selected one stands out
    assert "rank 250" in by_id["c3"].hovertext[-1]
    assert_escaped(fig)
    with pytest.raises(ValueError):
        slope_figure(["naive"], lines, depth=30)


def test_cosine_rank_figure_has_a_curve_per_method_and_rings_the_selection():
    curves = {"naive": [0.9 - 0.001 * i for i in range(300)], "late": [0.8, 0.7, 0.6]}
    fig = cosine_rank_figure(curves, k=10, marks=[("late", 2, 0.7, EVIL)])
    names = [t.name for t in fig.data]
    assert names[:2] == ["naive", "late"] and len(fig.data) == 3
    assert list(fig.data[2].x) == [2] and list(fig.data[2].y) == [0.7]
    assert fig.layout.xaxis.type == "log"  # a 300-rank curve
    assert "0.200 cosine" in fig.layout.title.text  # late's top 3 span 0.8 - 0.6
    assert_escaped(fig)


def test_rank_scatter_sorts_queries_by_which_method_ranked_gold_better():
    points = [("q1", EVIL, 5, 1), ("q2", "b", 1, 5), ("q3", "c", 2, 2), ("q4", "d", None, 3)]
    fig = rank_scatter_figure(points, x_method="naive", y_method="late", depth=10, selected="q1")
    groups = {t.name: t for t in fig.data if t.mode == "markers"}
    assert set(groups) == {"late better (2)", "late worse (1)", "same rank (1)"}
    better = groups["late better (2)"]
    assert list(better.customdata) == ["q1", "q4"]
    assert list(better.x) == [5, 18]  # unknown rank: the band past the depth (1.8 x 10)
    assert better.marker.size[0] > better.marker.size[1]  # the selected query
    assert fig.layout.xaxis.ticktext[-1] == "> 10"
    assert_escaped(fig)


def test_cause_bar_figure_keeps_the_order_and_counts():
    counts = {"parse": 0, "boundary": 2, "context": 5, "vocabulary": 0, "label": 1, "other": 0}
    fig = cause_bar_figure(counts, n_sampled=20)
    assert list(fig.data[0].y) == list(counts) and list(fig.data[0].x) == [0, 2, 5, 0, 1, 0]
    assert "8 tagged of 20 sampled" in fig.layout.title.text


def test_context_coverage_draws_chunks_by_level_and_every_window():
    metas = [
        {"char_start": 0, "char_end": 40, "context": "full", "token_count": 9,
         "full_context_tokens": 9},
        {"char_start": 40, "char_end": 90, "context": "partial", "token_count": 11,
         "full_context_tokens": 4},
    ]  # fmt: skip
    chunks = chunk_contexts(["a", "b"], metas, [EVIL, "plain words"], late=True)
    assert [c.level for c in chunks] == ["full", "partial"]
    assert chunk_contexts(["a"], metas[:1], ["x"], late=False)[0].level == "none"
    assert context_counts(chunks) == {"full": 1, "partial": 1, "none": 0}
    windows = [
        LateWindow(index=0, token_start=0, token_end=20, owned_token_start=0, owned_token_end=15,
                   char_start=0, char_end=70, owned_char_start=0, owned_char_end=55),
        LateWindow(index=1, token_start=10, token_end=24, owned_token_start=15, owned_token_end=24,
                   char_start=35, char_end=90, owned_char_start=55, owned_char_end=90),
    ]  # fmt: skip
    fig = context_coverage_figure(
        doc_label="doc", doc_chars=90, doc_tokens=24, window_tokens=20, limit_tokens=22,
        windows=windows, chunks=chunks, selected="b",
    )  # fmt: skip
    levels = [t for t in fig.data if t.name]
    assert [t.marker.color for t in levels] == [CONTEXT_COLOURS["full"], CONTEXT_COLOURS["partial"]]
    assert len([t for t in fig.data if not t.name]) == 4  # seen + owned part of each window
    assert "24 tokens, over the model limit of 22: 2 macro-windows of 20" in fig.layout.title.text
    assert_escaped(fig)
    with pytest.raises(ValueError):
        ChunkContext(chunk_id="x", label="x", char_start=0, char_end=1, level="some")
