"""Paired bootstrap: sane intervals, reproducible by seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.evaluate.bootstrap import metric_deltas, paired_bootstrap


def _pairs(seed: int, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.5).astype(float)
    b = np.where(rng.random(n) < 0.2, 1 - a, a)
    return a, b


def test_interval_contains_the_observed_delta_and_is_reproducible() -> None:
    a, b = _pairs(1)
    first = paired_bootstrap(a, b, seed=7)
    again = paired_bootstrap(a, b, seed=7)
    other = paired_bootstrap(a, b, seed=8)
    assert first is not None and other is not None
    assert first == again
    assert first.low <= first.delta <= first.high
    assert first.delta == pytest.approx(float(np.mean(b - a)))
    assert (other.low, other.high) != (first.low, first.high)
    assert first.n == 200 and first.confidence == 0.95


def test_a_constant_shift_has_a_point_interval() -> None:
    a = np.linspace(0, 1, 50)
    out = paired_bootstrap(a, a + 0.25)
    assert out is not None
    assert out.delta == pytest.approx(0.25)
    assert out.low == pytest.approx(0.25) and out.high == pytest.approx(0.25)
    assert out.excludes_zero


def test_pairing_matters() -> None:
    """Large per-query spread but a small consistent gain: paired, the interval excludes 0."""
    base = np.linspace(0, 1, 100)
    out = paired_bootstrap(base, base + 0.01)
    assert out is not None and out.low > 0


def test_no_pairs_and_bad_input() -> None:
    assert paired_bootstrap([], []) is None
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0], confidence=1.0)


def test_wider_confidence_gives_a_wider_interval() -> None:
    a, b = _pairs(3)
    narrow = paired_bootstrap(a, b, confidence=0.5)
    wide = paired_bootstrap(a, b, confidence=0.99)
    assert narrow is not None and wide is not None
    assert wide.low <= narrow.low and wide.high >= narrow.high


def test_metric_deltas_pair_only_defined_values() -> None:
    rows_a = [{"x": 0.0, "y": None}, {"x": 1.0, "y": 0.5}, {"x": 0.0, "y": 0.0}]
    rows_b = [{"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 1.0}, {"x": 0.0, "y": None}]
    out = metric_deltas(rows_a, rows_b, ["x", "y"])
    assert out["x"] is not None and out["x"].n == 3
    assert out["x"].delta == pytest.approx(1 / 3)
    assert out["y"] is not None and out["y"].n == 1 and out["y"].delta == pytest.approx(0.5)
    assert metric_deltas([{"x": None}], [{"x": 1.0}], ["x"])["x"] is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=60),
    st.integers(0, 2**32 - 1),
)
def test_interval_always_brackets_the_delta(pairs: list[tuple[float, float]], seed: int) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    out = paired_bootstrap(a, b, seed=seed, resamples=200)
    assert out is not None
    diffs = np.subtract(b, a)
    assert diffs.min() - 1e-12 <= out.low <= out.high <= diffs.max() + 1e-12


def test_the_command_line_marks_a_delta_clear_only_on_enough_queries():
    """``*`` needs the interval off zero on 30+ queries; fewer queries get ``?``."""
    from core.cli.run_table import delta_cell
    from core.evaluate.bootstrap import DeltaInterval

    few = DeltaInterval(delta=0.2, low=0.05, high=0.35, n=6)
    many = DeltaInterval(delta=0.2, low=0.05, high=0.35, n=40)
    noise = DeltaInterval(delta=0.2, low=-0.05, high=0.35, n=40)
    assert delta_cell(few).endswith("?") and delta_cell(many).endswith("*")
    assert delta_cell(noise).endswith(" ")
