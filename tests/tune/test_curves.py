"""Curves of a sweep: bootstrap bands hold the mean and repeat, crossovers sit between the
sizes where the order flips, the best cell is the highest mean; the background job reports
real counts and stops when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.evaluate import EvalConfig, read_queries
from core.formats import load_document
from core.tune import parse_grid, run_sweep
from core.tune.curves import Series, best_cells, bootstrap_interval, crossovers, curves
from core.tune.job import SweepJob
from core.tune.sweep_records import ZERO_COST
from tests.fakes import FakeEncoder, fake_embed_chunks
from tests.tune.conftest import small_docs


def _series(method: str, means: list[float]) -> Series:
    n = len(means)
    return Series(
        method=method, metric="mrr", sizes=(64, 128, 256, 512)[:n], means=tuple(means),
        lows=tuple(means), highs=tuple(means), costs=(ZERO_COST,) * n, policy_keys=("k",) * n,
    )  # fmt: skip


def test_a_crossover_is_placed_between_the_sizes_where_the_order_flips() -> None:
    late = _series("late", [0.8, 0.7, 0.5, 0.4])
    naive = _series("naive", [0.6, 0.6, 0.6, 0.6])
    [found] = crossovers(late, naive, queries=40)
    assert found.better_below == "late" and found.other == "naive"
    assert 128 < found.size < 256
    assert found.size == pytest.approx(2 ** (7 + 0.1 / 0.2))  # log2-linear: 0.1 -> -0.1
    assert found.clear  # zero-width bands: apart on both sides
    assert found.sentence("tokens") == (
        "late beats naive on mrr below 181 tokens on this set (bands apart on both sides, "
        "40 queries)"
    )
    assert crossovers(naive, _series("x", [0.6, 0.6, 0.6, 0.6])) == []  # ties never cross
    assert [c.better_below for c in crossovers(naive, late)] == ["late"]


def test_bootstrap_intervals_hold_the_mean_and_repeat() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.25]
    low, high = bootstrap_interval(values, seed=3)
    assert low <= sum(values) / len(values) <= high and low < high
    assert bootstrap_interval(values, seed=3) == (low, high)
    assert bootstrap_interval([0.5]) == (0.5, 0.5)


@pytest.fixture
def sweep_args(small_set: Path) -> dict:
    grid = parse_grid(["fixed"], (300, 600, 1200), ("0",))
    return {
        "queries": read_queries(small_set / "q.jsonl"),
        "docs": [load_document(p) for p in small_docs()],
        "grid": grid,
        "template": EvalConfig(policy=grid[0].policy, methods=("naive", "bm25"), ks=(1, 5)),
        "encoder": FakeEncoder(),
        "embed": fake_embed_chunks,
    }


def test_curves_and_best_cells_of_a_sweep(sweep_args: dict) -> None:
    sweep = run_sweep(**sweep_args)
    lines = curves(sweep, "mrr", "fixed", "0")
    assert [s.method for s in lines] == ["naive", "bm25"]
    for s in lines:
        assert s.sizes == (300, 600, 1200)
        assert all(lo <= m <= hi for lo, m, hi in zip(s.lows, s.means, s.highs, strict=True))
        assert [c.vectors for c in s.costs] == sorted((c.vectors for c in s.costs), reverse=True)
    best = best_cells(sweep, ["mrr", "hit@1"])["mrr"]
    assert best.metrics["mrr"] == max(max(s.means) for s in lines)


def test_the_job_counts_and_stops_when_asked(sweep_args: dict) -> None:
    job = SweepJob(arguments=sweep_args)
    job.on_point = lambda sweep: job.cancel.set()  # "Stop" pressed during the first point
    job.start()
    job.thread.join(60)
    assert job.stopped is not None and len(job.stopped.points) == 1 and job.result is None
    assert job.summary() == ("warning", "Stopped after 1 point(s); start it again to resume.")
    share, text = job.progress()
    assert share == pytest.approx(1 / 3)
    assert text.startswith("Point 1 of 3 (fixed-chars-300-0): ") and "chunk × method" in text
    again = SweepJob(arguments=sweep_args | {"resume": job.stopped})
    again.run()
    assert again.result is not None and again.result.points[0] is job.stopped.points[0]
    assert again.summary()[0] == "success"
