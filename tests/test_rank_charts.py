"""Figures of ranks: what each one draws, where unknown ranks go, and that labels from
documents reach them escaped."""

from __future__ import annotations

import json

import pytest
from text_width import right_margin_holds

from core.embed.records import LateWindow
from core.render.chart_style import (
    CONTEXT_COLOURS,
    DOWN_COLOUR,
    SAME_COLOUR,
    UP_COLOUR,
    WINDOW_COLOURS,
)
from core.render.context_charts import context_coverage_figure
from core.render.failure_charts import (
    cause_bar_figure,
    rank_scatter_figure,
)
from core.render.rank_charts import (
    SlopeLine,
    biggest_movers,
    rank_axis_ticks,
    rank_step,
    score_rank_figure,
    slope_figure,
    slope_lines,
)
from core.store.contexts import ChunkContext, chunk_contexts, context_counts

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


def points_of(fig):
    """The slope figure's marker trace: every chunk's points, chunk ids as customdata."""
    [ranks] = [t for t in fig.data if t.name == "ranks"]
    return ranks


def test_slope_figure_labels_movers_reverses_ranks_and_escapes():
    lines = [
        SlopeLine(chunk_id="c1", label=EVIL, ranks=(12, 1)),
        SlopeLine(chunk_id="c2", label="steady", ranks=(2, 2)),
        SlopeLine(chunk_id="c3", label="deep", ranks=(3, 250)),
        SlopeLine(chunk_id="c4", label="small move", ranks=(5, 6)),
    ]
    fig = slope_figure(["naive", "late"], lines, depth=30, n_labelled=2, selected="c2")
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # rank 1 at the top
    ranks = points_of(fig)
    ys = {(c, x): y for c, x, y in zip(ranks.customdata, ranks.x, ranks.y, strict=True)}
    assert {c for c, _ in ys} == {"c1", "c2", "c3", "c4"}
    assert ys["c3", "late"] == 31  # deeper than the depth: the "> 30" band
    assert "> 30" in fig.layout.yaxis.ticktext
    notes = [a.text for a in fig.layout.annotations]
    # The 2 biggest movers, and the selected chunk; not "small move".
    assert [n.split(" ")[0] for n in notes] == ["▲11", "=", "▼247"]
    assert notes[1] == "= steady"
    widths = {t.name: t.line.width for t in fig.data if t.mode == "lines"}
    assert widths["selected"] > widths["moved up"]  # the selected one stands out
    assert any("late: rank 250" in h for h in ranks.hovertext)
    assert_escaped(fig)
    with pytest.raises(ValueError):
        slope_figure(["naive"], lines, depth=30)


def segment_colours(fig) -> dict[tuple, str]:
    """(from stage, to stage, from y, to y) -> colour of every segment drawn."""
    out = {}
    for trace in fig.data:
        if trace.mode != "lines":
            continue
        xs, ys = list(trace.x), list(trace.y)
        for i in range(len(xs) - 1):
            if xs[i] is not None and xs[i + 1] is not None:
                out[xs[i], xs[i + 1], ys[i], ys[i + 1]] = trace.line.color
    return out


def test_slope_segments_take_the_colour_of_their_own_direction():
    stages = ["naive", "late", "contextual"]
    lines = [
        SlopeLine(chunk_id="dip", label="dip", ranks=(9, 28, 19)),  # down, then up
        SlopeLine(chunk_id="gone", label="gone", ranks=(4, None, 4)),  # lost, then back
        SlopeLine(chunk_id="flat", label="flat", ranks=(3, 3, 2)),
    ]
    for selected in (None, "dip"):
        colours = segment_colours(slope_figure(stages, lines, depth=30, selected=selected))
        assert colours["naive", "late", 9, 28] == DOWN_COLOUR
        assert colours["late", "contextual", 28, 19] == UP_COLOUR
        assert colours["naive", "late", 4, 31] == DOWN_COLOUR
        assert colours["late", "contextual", 31, 4] == UP_COLOUR
        assert colours["naive", "late", 3, 3] == SAME_COLOUR
        assert colours["late", "contextual", 3, 2] == UP_COLOUR
    fig = slope_figure(stages, lines, depth=30)
    assert list(fig.layout.xaxis.categoryarray) == stages  # not the order traces met them
    assert "each step" in fig.layout.title.text
    # Only the marker trace answers a click, and its points carry the chunk id.
    assert [t.name for t in fig.data if t.hoverinfo != "skip"] == ["ranks"]
    assert list(points_of(fig).customdata) == ["dip"] * 3 + ["gone"] * 3 + ["flat"] * 3


def test_rank_step_counts_not_found_as_deeper_than_any_rank():
    assert rank_step(9, 28, 30) == -19 and rank_step(28, 19, 30) == 9
    assert rank_step(2, None, 30) == -29  # None: depth + 1
    assert rank_step(250, None, 30) < 0  # not found is never better than rank 250
    assert rank_step(None, 250, 30) > 0 and rank_step(None, None, 30) == 0


def test_slope_labels_fit_the_margin_and_never_overlap():
    long = "Corvane HX40 › Maintenance and servicing intervals (datasheet-corvane-hx40)"
    lines = [
        SlopeLine(chunk_id=f"c{i}", label=f"{long} {i}", ranks=(25 + i, 7 + i)) for i in range(5)
    ]
    fig = slope_figure(["naive", "late"], lines, depth=30)
    notes = list(fig.layout.annotations)
    assert len(notes) == 5
    for note in notes:
        assert "Corvane" not in note.text and len(note.text) <= 32  # last heading, cut
        assert note.hovertext.startswith("Corvane HX40")  # the full label in the hover
    # The widest label, as drawn, fits the right margin.
    assert right_margin_holds(fig)
    # Ranks 7-11 are ~11 px apart on the plot; the labels are moved to 14 px apart.
    layout = fig.layout
    plot_px = layout.height - layout.margin.t - layout.margin.b
    assert layout.xaxis.automargin is False  # so that height is exact
    px_per_rank = plot_px / (layout.yaxis.range[0] - layout.yaxis.range[1])
    at = sorted(n.y * px_per_rank - n.yshift for n in notes)
    assert all(b - a >= 14 - 1e-9 for a, b in zip(at, at[1:], strict=False))


def test_score_rank_figure_draws_each_method_on_its_own_scale_and_rings_the_selection():
    from core.methods import get

    curves = {"naive": [0.9 - 0.001 * i for i in range(300)], "bm25": [12.0, 7.0, 6.5]}
    scales = {m: get(m).score for m in curves}
    fig = score_rank_figure(curves, scales=scales, k=10, marks=[("bm25", 2, 7.0, EVIL)])
    names = [t.name for t in fig.data]
    assert names[:2] == ["naive", "bm25"] and len(fig.data) == 3
    assert fig.data[0].yaxis == "y" and fig.data[1].yaxis == "y2"  # one panel each
    assert fig.data[2].yaxis == "y2" and list(fig.data[2].y) == [7.0]  # ring on bm25's panel
    assert fig.layout.yaxis.title.text == "cosine"
    assert fig.layout.yaxis2.title.text == "BM25 score"
    assert fig.layout.xaxis.type == "log"  # a 300-rank curve, ticks a reader expects
    assert list(fig.layout.xaxis.tickvals) == [1, 2, 5, 10, 20, 50, 100, 200, 300]
    # naive falls 0.009 from rank 1 to 10; bm25's three ranks 5.5: each on its own scale
    notes = [a.text for a in fig.layout.annotations]
    assert notes == ["<b>naive</b> · falls 0.009", "<b>bm25</b> · falls 5.5"]
    assert fig.layout.xaxis2.title.text == "rank"  # under the last panel
    assert_escaped(fig)


@pytest.mark.parametrize(
    ("longest", "ticks"),
    [
        (1, [1]),
        (8, [1, 2, 5, 8]),
        (6, [1, 2, 6]),
        (120, [1, 2, 5, 10, 20, 50, 120]),
        (110, [1, 2, 5, 10, 20, 50, 110]),
        (1000, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]),
        (1400, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1400]),
    ],
)
def test_rank_axis_ticks_stay_within_the_data_and_end_on_the_last_rank(longest, ticks):
    assert rank_axis_ticks(longest) == ticks


def test_rank_scatter_sorts_queries_by_which_method_ranked_gold_better():
    points = [("q1", EVIL, 5, 1), ("q2", "b", 1, 5), ("q3", "c", 2, 2), ("q4", "d", None, 3)]
    fig = rank_scatter_figure(points, x_method="naive", y_method="late", depth=10, selected="q1")
    groups = {t.name: t for t in fig.data if t.mode != "lines"}
    assert set(groups) == {"late better (2)", "late worse (1)", "same rank (1)"}
    better = groups["late better (2)"]
    assert list(better.customdata) == ["q1", "q4"]
    assert list(better.x) == [5, 18]  # unknown rank: the band past the depth (1.8 x 10)
    assert better.marker.size[0] > better.marker.size[1]  # the selected query
    assert fig.layout.xaxis.ticktext[-1] == "> 10"
    assert_escaped(fig)


def test_rank_scatter_shows_how_many_queries_share_a_point():
    points = [(f"s{i}", f"same {i}", 1, 1) for i in range(12)]
    points += [("b1", "better one", 2, 1), ("b2", "better two", 2, 1), ("b3", "alone", 4, 2)]
    fig = rank_scatter_figure(points, x_method="naive", y_method="late", depth=10, selected="b2")
    groups = {t.name: t for t in fig.data if t.mode != "lines"}
    same, better = groups["same rank (12)"], groups["late better (3)"]
    assert list(same.x) == [1] and list(same.text) == ["12"]  # one marker, the count on it
    assert list(same.customdata) == ["s0"]  # a click opens the first query there
    assert "12 queries here" in same.hovertext[0] and "a click opens s0" in same.hovertext[0]
    assert "and 6 more" in same.hovertext[0]  # six listed by name
    assert list(zip(better.x, better.y, strict=True)) == [(2, 1), (4, 2)]
    assert list(better.text) == ["2", ""]
    assert list(better.customdata) == ["b2", "b3"]  # the selected query speaks for its point
    assert same.marker.size[0] > better.marker.size[1]  # area grows with the count
    assert "2 queries here" in better.hovertext[0] and "b1: better one" in better.hovertext[0]
    assert fig.layout.legend.itemsizing == "constant"


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


def window(index: int, start: int, end: int) -> LateWindow:
    return LateWindow(
        index=index, token_start=start, token_end=end, owned_token_start=start,
        owned_token_end=end, char_start=start * 4, char_end=end * 4,
        owned_char_start=start * 4, owned_char_end=end * 4,
    )  # fmt: skip


def coverage(windows: list[LateWindow]):
    chunks = [ChunkContext(chunk_id="a", label="a", char_start=0, char_end=40, level="full")]
    end = windows[-1].char_end if windows else 40
    return context_coverage_figure(
        doc_label="doc", doc_chars=end, doc_tokens=end // 4, window_tokens=20,
        limit_tokens=22, windows=windows, chunks=chunks,
    )  # fmt: skip


def test_window_rows_are_named_by_the_numbers_the_app_shows_and_none_is_empty():
    one = coverage([window(0, 0, 10)])
    assert list(one.layout.yaxis.categoryarray) == ["chunks", "window 1"]
    rows = {t.y[0] for t in one.data if not t.name}
    assert rows == {"window 1"}  # no empty second row
    assert [t.text[0] for t in one.data if not t.name] == ["", "1"]  # number on the owned part
    two = coverage([window(0, 0, 10), window(1, 10, 20)])
    assert list(two.layout.yaxis.categoryarray) == ["chunks", "window 2", "window 1"]
    assert [t.marker.color for t in two.data if not t.name][::2] == list(WINDOW_COLOURS)
    three = coverage([window(i, 10 * i, 10 * i + 10) for i in range(3)])
    assert list(three.layout.yaxis.categoryarray) == ["chunks", "window 2", "windows 1 and 3"]
    many = coverage([window(i, 10 * i, 10 * i + 10) for i in range(9)])
    assert list(many.layout.yaxis.categoryarray) == [
        "chunks", "windows 2, 4 … 8", "windows 1, 3 … 9",
    ]  # fmt: skip
    assert list(coverage([]).layout.yaxis.categoryarray) == ["chunks"]
    assert one.layout.height < two.layout.height  # no height kept for an empty row
