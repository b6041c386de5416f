"""Layout of the document-lengths chart: its line labels never collide whatever the
values, and documents without text are shown and counted apart."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from text_width import right_margin_holds

from core.render import charts
from core.render.chart_style import spread


@given(
    targets=st.lists(st.floats(-50, 400, allow_nan=False), max_size=8),
    gap=st.floats(1, 30),
)
def test_spread_keeps_the_gap_and_the_order(targets, gap):
    placed = spread(targets, gap=gap, low=0, high=300)
    assert len(placed) == len(targets)
    ordered = sorted(zip(targets, placed, strict=True))
    for (_, a), (_, b) in zip(ordered, ordered[1:], strict=False):
        assert b - a >= gap - 1e-6
    if len(targets) * gap <= 300:  # room for all: they stay on the axis
        assert all(-1e-6 <= p <= 300 + 1e-6 for p in placed)


def test_spread_leaves_labels_with_room_where_they_are():
    assert spread([10, 100, 200], gap=14, low=0, high=300) == [10, 100, 200]
    for targets in ([100, 95], [300, 299], [0, 1, 2]):  # too close: moved apart, not far
        placed = spread(targets, gap=14, low=0, high=300)
        ordered = [p for _, p in sorted(zip(targets, placed, strict=True))]
        assert all(b - a >= 14 - 1e-6 for a, b in zip(ordered, ordered[1:], strict=False))
        assert all(0 <= p <= 300 for p in placed)
        room = 14 * (len(targets) - 1)  # none moves further than all the gaps together
        assert all(abs(p - t) <= room for p, t in zip(placed, targets, strict=True))


def label_pixels(fig) -> list[float]:
    """Where each line label is drawn, in pixels up from the plot's bottom."""
    low, high = fig.layout.yaxis.range
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    return [(a.y - low) / (high - low) * plot_px + a.yshift for a in fig.layout.annotations]


def test_line_labels_sit_right_of_the_plot_and_never_overlap():
    # The review's case: one pass 510 over chunk limit 254, p50 374 between them.
    lengths = [230, 330, 360, 374, 390, 420, 2400, 2900, 7399, 11000]
    for window, chunk in ((510, 254), (510, 500), (400, 374)):
        fig = charts.document_lengths_figure(
            [f"doc {i}" for i in range(len(lengths))], lengths, window, chunk_window_tokens=chunk
        )
        notes = list(fig.layout.annotations)
        assert {n.text.split(" ")[0] for n in notes} == {"one", "chunk", "p50", "p90"}
        for note in notes:  # in the right margin, clear of the bars
            assert (note.xref, note.x, note.xanchor) == ("paper", 1, "left")
        assert right_margin_holds(fig)  # the widest label, as drawn, fits the margin
        at = sorted(label_pixels(fig))
        assert all(b - a >= 14 - 1e-6 for a, b in zip(at, at[1:], strict=False)), at
        assert fig.layout.xaxis.automargin is False  # so the plot height above is exact


def test_documents_without_text_are_drawn_at_the_floor_and_counted_apart():
    names = ["scan", "short", "long"]
    fig = charts.document_lengths_figure(names, [0, 100, 1000], 510, chunk_window_tokens=254)
    title = fig.layout.title.text
    assert "50% of 2 too long for one pass; 1 without text" in title
    [stub] = [t for t in fig.data if t.name == "no text (1)"]
    assert list(stub.x) == ["scan"] and "0 tokens" in stub.hovertemplate
    assert math.log10(stub.y[0]) > fig.layout.yaxis.range[0]  # a visible stub on the log axis
    assert all("scan" not in t.x for t in fig.data if t.name != "no text (1)")
    p50 = [a for a in fig.layout.annotations if a.text.startswith("p50")]
    assert p50[0].text == "p50 550"  # the median of 100 and 1000, not of 0, 100, 1000
    assert charts.overflow_share([0, 0, 100, 1000], 510) == 0.5
    assert charts.length_percentiles([0, 10, 20, 30])["p50"] == 20
    assert charts.length_percentiles([0, 0]) == {"p10": 0, "p50": 0, "p90": 0, "max": 0}
    assert charts.length_percentiles([]) == {}
    empty = charts.document_lengths_figure(["scan"], [0], 510)
    assert "0% of 0 too long for one pass; 1 without text" in empty.layout.title.text


def test_long_document_names_are_cut_under_the_bars_and_whole_in_the_hover():
    long = "plumbing-handbook-2024-edition-final"
    fig = charts.document_lengths_figure([long, "a<b"], [100, 2000], 510)
    assert list(fig.layout.xaxis.ticktext) == ["plumbing-hand…", "a&lt;b"]
    assert long in fig.data[0].x
