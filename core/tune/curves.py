"""Metric-vs-size curves of a sweep: bootstrap bands, crossovers, the best cell per metric.

A ``Series`` is one method's line over the chunk sizes of one policy name and one overlap
(as asked: ``"10%"`` is one line whatever the size): at each size the run's mean of the
metric over its queries, and a percentile bootstrap interval of that mean (queries
resampled with replacement, ``numpy.random.default_rng(seed)``, so the same sweep always
draws the same bands). A ``Crossover`` is where the difference between two methods changes
sign between two neighbouring sizes, placed by linear interpolation in log2(size) (the
axis the curves are drawn on); a tie at a measured size is no crossing.

A crossover is ``clear`` only when the two bands separate on both sides of it: at some
measured size below it the better method's band lies wholly above the other's, and at
some size above it wholly below. Otherwise the page says "no clear crossover with N
queries". A best cell at the smallest or largest size its line tried says so
(``edge_note``: the best may lie outside the grid), and under ``FEW_QUERIES`` queries
``power_note`` says how many more would make the largest gap seen detectable (from the
paired bootstrap of that gap, ``core.evaluate.bootstrap.queries_to_detect``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core import methods as registry
from core.evaluate.bootstrap import FEW_QUERIES, paired_bootstrap, queries_to_detect
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
    clear: bool = True  # the bands separate on both sides (see the module docstring)
    queries: int = 0

    def sentence(self, unit: str) -> str:
        if not self.clear:
            return (
                f"no clear crossover with {self.queries} queries: {self.better_below} and "
                f"{self.other} cross near {self.size:,.0f} {unit} on {self.metric}, inside "
                "each other's bands"
            )
        return (
            f"{self.better_below} beats {self.other} on {self.metric} below "
            f"{self.size:,.0f} {unit} on this set (bands apart on both sides, "
            f"{self.queries} queries)"
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


def _above(a: Series, b: Series, i: int) -> bool:
    """``a``'s band lies wholly above ``b``'s at size index ``i``."""
    return a.lows[i] > b.highs[i]


def crossovers(a: Series, b: Series, queries: int = 0) -> list[Crossover]:
    """Where ``a - b`` changes sign between neighbouring sizes (log2-interpolated), each
    marked ``clear`` or not (``queries``: how many the bands rest on, for the sentence)."""
    out = []
    diffs = [x - y for x, y in zip(a.means, b.means, strict=True)]
    for i in range(len(diffs) - 1):
        d0, d1 = diffs[i], diffs[i + 1]
        if not (d0 * d1 < 0):  # also false for NaN and for a tie
            continue
        x0, x1 = math.log2(a.sizes[i]), math.log2(a.sizes[i + 1])
        size = 2 ** (x0 + (x1 - x0) * d0 / (d0 - d1))
        better, other = (a, b) if d0 > 0 else (b, a)
        clear = any(_above(better, other, j) for j in range(i + 1)) and any(
            _above(other, better, j) for j in range(i + 1, len(diffs))
        )
        out.append(
            Crossover(
                better_below=better.method, other=other.method, size=size, metric=a.metric,
                clear=clear, queries=queries,
            )
        )  # fmt: skip
    return out


def all_crossovers(series: Sequence[Series], queries: int = 0) -> list[Crossover]:
    """Crossovers of every pair of methods (simpler first, as the deltas of a run)."""
    by_method = {s.method: s for s in series}
    out = []
    for simple, elaborate in registry.delta_pairs(list(by_method)):
        out += crossovers(by_method[elaborate], by_method[simple], queries)
    return out


def query_count(sweep: Sweep) -> int:
    """Queries each point was scored on (the first point's; every point has the same)."""
    return sweep.points[0].run.n_queries if sweep.points else 0


def edge_note(sweep: Sweep, cell: Cell) -> str | None:
    """``best at the largest size tried: extend the grid`` (or the smallest) when the cell
    sits at an end of its line (same policy name, unit and overlap) of two or more sizes."""
    line = points_of(sweep, cell.policy.name, cell.overlap_asked)
    sizes = sorted({p.policy.size for p in line if p.policy.unit == cell.policy.unit})
    if len(sizes) < 2:
        return None
    if cell.policy.size == sizes[-1]:
        return "best at the largest size tried: extend the grid upwards"
    if cell.policy.size == sizes[0]:
        return "best at the smallest size tried: extend the grid downwards"
    return None


def power_note(series: Sequence[Series], sweep: Sweep, unit: str) -> str | None:
    """Under ``FEW_QUERIES`` queries: the largest gap between two methods at one size,
    whether its paired interval excludes zero, and about how many queries would make a gap
    of that size detectable (80% power); None with enough queries or one method."""
    n = query_count(sweep)
    if n >= FEW_QUERIES or len(series) < 2 or not series[0].sizes:
        return None
    by_key = {p.policy.key: p for p in sweep.points}
    best: tuple[float, str, str, int] | None = None
    for simple, elaborate in registry.delta_pairs([s.method for s in series]):
        a = next(s for s in series if s.method == simple)
        b = next(s for s in series if s.method == elaborate)
        for i in range(len(a.sizes)):
            gap = abs(b.means[i] - a.means[i])
            if not math.isnan(gap) and (best is None or gap > best[0]):
                best = (gap, simple, elaborate, i)
    if best is None or best[0] == 0:
        return f"only {n} queries: each moves a mean by {1 / max(n, 1):.2f}"
    gap, simple, elaborate, i = best
    point = by_key[series[0].policy_keys[i]]
    metric = series[0].metric
    delta = paired_bootstrap(_paired(point, simple, metric), _paired(point, elaborate, metric))
    needed = queries_to_detect(delta) if delta is not None else None
    ahead, behind = (
        (elaborate, simple) if delta is not None and delta.delta > 0 else (simple, elaborate)
    )
    seen = (
        f"only {n} queries: the largest gap, {ahead} ahead of {behind} by {gap:.2f} at "
        f"{series[0].sizes[i]:,} {unit},"
    )
    if delta is not None and delta.excludes_zero:
        return (
            f"{seen} holds in the bootstrap, but {n} queries are too few to trust it: "
            f"confirm on {FEW_QUERIES}+"
        )
    if needed is None:
        return f"{seen} is inside the noise"
    return (
        f"{seen} is inside the noise; about {max(needed - n, 1):,} more queries would make a "
        "gap of that size detectable (80% power)"
    )


def _paired(point: SweepPoint, method: str, metric: str) -> list[float]:
    """Per query, the metric under ``method`` (0 where undefined, kept for pairing)."""
    return [float(q.metrics[method].get(metric) or 0.0) for q in point.run.queries]


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
