"""Metric-vs-size curves of a sweep: bootstrap bands, crossovers, the best cell per metric.

A ``Series`` is one method's line over the chunk sizes of one policy name and one overlap
(as asked: ``"10%"`` is one line whatever the size): at each size the run's mean of the
metric over its queries, and a percentile bootstrap interval of that mean (queries
resampled with replacement, ``numpy.random.default_rng(seed)``, so the same sweep always
draws the same bands). A ``Crossover`` is where the difference between two methods changes
sign between two neighbouring sizes, placed by linear interpolation in log2(size) (the
axis the curves are drawn on); a tie at a measured size is no crossing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core import methods as registry
from core.tune.sweep_records import Cell, MethodCost, Sweep, SweepPoint

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One method's curve: per size (ascending) the mean, its interval and the cost."""

    method: str
    metric: str
    sizes: tuple[int, ...]
    means: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    costs: tuple[MethodCost, ...]
    policy_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Crossover:
    """``better_below`` beats ``other`` at sizes under ``size`` and loses above it."""

    better_below: str
    other: str
    size: float
    metric: str

    def sentence(self, unit: str) -> str:
        return (
            f"{self.better_below} beats {self.other} on {self.metric} below "
            f"{self.size:,.0f} {unit} on this set"
        )


def bootstrap_interval(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (both ends the mean when
    fewer than two values)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size < 2:
        mean = float(data.mean()) if data.size else math.nan
        return mean, mean
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _values(point: SweepPoint, method: str, metric: str) -> list[float]:
    out = []
    for query in point.run.queries:
        value = query.metrics[method].get(metric)
        if value is not None:
            out.append(float(value))
    return out


def points_of(sweep: Sweep, policy_name: str, overlap_asked: str) -> list[SweepPoint]:
    """The points of one policy name and overlap, by size."""
    chosen = [
        p for p in sweep.points if p.policy.name == policy_name and p.overlap_asked == overlap_asked
    ]
    return sorted(chosen, key=lambda p: p.policy.size)


def curves(
    sweep: Sweep,
    metric: str,
    policy_name: str,
    overlap_asked: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Series]:
    """One series per method of the sweep, over the sizes of that policy and overlap."""
    points = points_of(sweep, policy_name, overlap_asked)
    out = []
    for method in sweep.methods:
        means, lows, highs = [], [], []
        for point in points:
            mean = point.run.metrics[method].get(metric)
            low, high = bootstrap_interval(
                _values(point, method, metric), resamples=resamples, seed=seed
            )
            means.append(math.nan if mean is None else float(mean))
            lows.append(low)
            highs.append(high)
        out.append(
            Series(
                method=method,
                metric=metric,
                sizes=tuple(p.policy.size for p in points),
                means=tuple(means),
                lows=tuple(lows),
                highs=tuple(highs),
                costs=tuple(p.cost_of(method) for p in points),
                policy_keys=tuple(p.policy.key for p in points),
            )
        )
    return out


def crossovers(a: Series, b: Series) -> list[Crossover]:
    """Where ``a - b`` changes sign between neighbouring sizes (log2-interpolated)."""
    out = []
    diffs = [x - y for x, y in zip(a.means, b.means, strict=True)]
    for i in range(len(diffs) - 1):
        d0, d1 = diffs[i], diffs[i + 1]
        if not (d0 * d1 < 0):  # also false for NaN and for a tie
            continue
        x0, x1 = math.log2(a.sizes[i]), math.log2(a.sizes[i + 1])
        size = 2 ** (x0 + (x1 - x0) * d0 / (d0 - d1))
        better, other = (a.method, b.method) if d0 > 0 else (b.method, a.method)
        out.append(Crossover(better_below=better, other=other, size=size, metric=a.metric))
    return out


def all_crossovers(series: Sequence[Series]) -> list[Crossover]:
    """Crossovers of every pair of methods (simpler first, as the deltas of a run)."""
    by_method = {s.method: s for s in series}
    out = []
    for simple, elaborate in registry.delta_pairs(list(by_method)):
        out += crossovers(by_method[elaborate], by_method[simple])
    return out


def best_cells(sweep: Sweep, metrics: Sequence[str]) -> dict[str, Cell]:
    """Per metric, the cell with the highest mean (ties: the cheaper in vectors, then the
    earlier in the grid)."""
    cells = sweep.cells()
    out = {}
    for metric in metrics:
        scored = [c for c in cells if c.metrics.get(metric) is not None]
        if scored:
            out[metric] = max(
                scored, key=lambda c: (c.metrics[metric], -c.cost.vectors)
            )  # max keeps the first of equal keys
    return out
