"""The Tune chart draws every grid point at any size list, with or without crossovers: the
x axis's range (log10 units, as Plotly takes a log axis's range) holds every size, and
each crossover's label and line stand inside it."""

from __future__ import annotations

import math

import pytest

from core.render.tune_charts import curve_figure
from core.tune.curves import Crossover, Series
from core.tune.sweep_records import MethodCost

COST = MethodCost(vectors=10, tokens_encoded=100, seconds=1.0)


def series(method: str, sizes: list[int], means: list[float]) -> Series:
    return Series(
        method=method, metric="mrr", sizes=tuple(sizes), means=tuple(means),
        lows=tuple(m - 0.05 for m in means), highs=tuple(m + 0.05 for m in means),
        costs=tuple(COST for _ in sizes), policy_keys=tuple(f"fixed-tokens-{s}-0" for s in sizes),
    )  # fmt: skip


def crossing(size: float) -> Crossover:
    return Crossover(better_below="naive", other="late", size=size, metric="mrr")


@pytest.mark.parametrize("sizes", [[128, 512], [16, 32, 64, 128, 256, 512, 1024, 2048]])
@pytest.mark.parametrize("crossed", [[], [0.6], [0.3, 0.55, 0.8]])
def test_the_axis_holds_every_point_and_every_crossover(sizes, crossed) -> None:
    n = len(sizes)
    naive = series("naive", sizes, [0.8 - 0.4 * i / (n - 1) for i in range(n)])
    late = series("late", sizes, [0.4 + 0.4 * i / (n - 1) for i in range(n)])
    low, high = math.log10(sizes[0]), math.log10(sizes[-1])
    at = [10 ** (low + f * (high - low)) for f in crossed]  # e.g. 239 tokens on 128/256/512
    fig = curve_figure([naive, late], [crossing(x) for x in at], unit="tokens")
    first, last = fig.layout.xaxis.range
    assert first < low and high < last  # every size, in log10 units, inside the range
    assert last - first < 2 * (high - low) + 1  # and not stretched far past them
    assert fig.layout.xaxis.type == "log"
    assert [a.x for a in fig.layout.annotations] == pytest.approx([math.log10(x) for x in at])
    for note in fig.layout.annotations:
        assert first < note.x < last
    for shape in fig.layout.shapes:  # shapes on a log axis take the value itself
        assert sizes[0] <= shape.x0 <= sizes[-1]
    drawn = [x for trace in fig.data if trace.mode == "lines+markers" for x in trace.x]
    assert sorted(set(drawn)) == sizes


def test_token_sizes_past_the_model_window_are_shaded_and_marked() -> None:
    sizes = [128, 256, 512]
    fig = curve_figure([series("naive", sizes, [0.5, 0.6, 0.55])], [], unit="tokens", window=300)
    assert list(fig.layout.xaxis.ticktext) == ["128", "256", "512<br>past window"]
    assert any("window (300 tokens): cut when embedded" in a.text for a in fig.layout.annotations)
    assert [s.type for s in fig.layout.shapes] == ["rect"] and fig.layout.shapes[0].x0 == 300
    chars = curve_figure([series("naive", sizes, [0.5, 0.6, 0.55])], [], unit="chars", window=254)
    assert "past window" not in "".join(chars.layout.xaxis.ticktext) and not chars.layout.shapes
