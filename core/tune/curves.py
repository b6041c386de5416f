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
queries". The best cell per metric (``best_verdicts``) says "no size is better than
another at this sample" when a cell at another size has an interval that reaches the
best one's ("no policy …" when that cell is another policy's; ``policy_bests`` sets each
policy's best beside the others', as a sweep of the user's splitter beside ours asks);
only a clear best at the smallest or largest size its line tried says so
(``edge_note``: the best may lie outside the grid); a size in tokens past the model's
window is marked (``past_window``). Under ``FEW_QUERIES`` queries
``power_note`` says how many more would make the largest gap seen detectable (from the
paired bootstrap of that gap, ``core.evaluate.bootstrap.queries_to_detect``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core import methods as registry
from core.errors import ChunkscopeError
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


def edge_note(sweep: Sweep, cell: Cell, window: int | None = None) -> str | None:
    """``best at the largest size tried: try sizes above 1,200`` (or below the smallest)
    when the cell sits at an end of its line (same policy name, unit and overlap) of two or
    more sizes. Sizes are free numbers, so the suggestion is one the page can draw; none
    upwards past the model's ``window`` (in tokens), where larger chunks are cut."""
    line = points_of(sweep, cell.policy.name, cell.overlap_asked)
    sizes = sorted({p.policy.size for p in line if p.policy.unit == cell.policy.unit})
    if len(sizes) < 2:
        return None
    unit = cell.policy.unit
    if cell.policy.size == sizes[-1]:
        if cut_by_window(cell, window):
            return (
                "best at the largest size tried, already past the model's window "
                f"({window:,} tokens)"
            )
        return f"best at the largest size tried: try sizes above {sizes[-1]:,} {unit}"
    if cell.policy.size == sizes[0]:
        return f"best at the smallest size tried: try sizes below {sizes[0]:,} {unit}"
    return None


def past_window(size: int, unit: str, window: int | None) -> bool:
    """Whether a chunk of ``size`` in ``unit`` is longer than the model's ``window``
    (its content tokens: ``max_seq_length`` less the special tokens). Only a size in
    tokens is known to be; a size in chars or sentences is not marked."""
    return window is not None and unit == "tokens" and size > window


def cut_by_window(cell: Cell, window: int | None) -> bool:
    """Whether ``cell``'s chunks are cut when its method embeds them: past the window
    (``past_window``) and a method that embeds with the model (BM25 reads every word)."""
    if not past_window(cell.policy.size, cell.policy.unit, window):
        return False
    try:
        return registry.get(cell.method).embedding is not None
    except ChunkscopeError:
        return True  # not known here: say what the size alone says


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
    """Per metric, the cell with the highest mean (equal means: the smaller size, then the
    earlier in the grid; never the cheaper, which would favour the largest size)."""
    return {metric: best.cell for metric, best in best_verdicts(sweep, metrics).items()}


NO_BETTER_SIZE = "no size is better than another at this sample"
NO_BETTER_POLICY = "no policy is better than another at this sample"


def _setting(cell: Cell) -> tuple[str, str, int]:
    """What a cell's rivals differ in: the policy, its unit and its size."""
    return (cell.policy.name, cell.policy.unit, cell.policy.size)


@dataclass(frozen=True, slots=True, kw_only=True)
class BestCell:
    """The highest mean of one metric, its 95% bootstrap interval, and the cells at other
    sizes (or of other policies) whose intervals reach it (``rivals``): with any, no size
    is better than another at this sample. ``named``: the sweep holds several policies,
    so each size says whose it is."""

    metric: str
    cell: Cell
    low: float
    high: float
    rivals: tuple[Cell, ...]
    named: bool = False

    @property
    def clear(self) -> bool:
        return not self.rivals

    def _size(self, cell: Cell, unit: bool = True) -> str:
        size = f"{cell.policy.size:,}" + (f" {cell.policy.unit}" if unit else "")
        return f"{size} ({cell.policy.name})" if self.named else size

    def verdict(self) -> str:
        """One line for the table: the size that leads, or that none does."""
        if self.clear:
            return f"{self._size(self.cell)} leads (intervals apart)"
        settings = sorted({_setting(c): c for c in (self.cell, *self.rivals)}.items())
        cells = [c for _, c in settings]
        units = {c.policy.unit for c in cells}
        policies = {c.policy.name for c in cells}
        if len(units) == 1 and not self.named:
            listed = ", ".join(f"{c.policy.size:,}" for c in cells) + f" {units.pop()}"
        else:  # several units or policies: each size says its own
            listed = ", ".join(self._size(c) for c in cells)
        lead = NO_BETTER_POLICY if len(policies) > 1 else NO_BETTER_SIZE
        return f"{lead}: intervals at {listed} overlap"


def best_verdicts(
    sweep: Sweep, metrics: Sequence[str], policy: str | None = None
) -> dict[str, BestCell]:
    """Per metric, the ``BestCell`` (see its doc); intervals as the curves draw them.
    ``policy``: only that policy's cells (each policy's own best, to set side by side)."""
    by_key = {p.policy.key: p for p in sweep.points}
    named = policy is None and len({p.policy.name for p in sweep.points}) > 1
    out = {}
    for metric in metrics:
        scored = [
            c for c in sweep.cells()
            if c.metrics.get(metric) is not None and policy in (None, c.policy.name)
        ]  # fmt: skip
        if not scored:
            continue
        order = {id(c): k for k, c in enumerate(scored)}
        best = min(
            scored, key=lambda c: (-float(c.metrics[metric] or 0.0), c.policy.size, order[id(c)])
        )
        low, high = _interval(by_key, best, metric)
        rivals = tuple(
            c for c in scored
            if c is not best
            and _setting(c) != _setting(best)
            and _interval(by_key, c, metric)[1] >= low
        )  # fmt: skip
        out[metric] = BestCell(
            metric=metric, cell=best, low=low, high=high, rivals=rivals, named=named
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyBest:
    """One policy's best cell of a metric beside the others' (``policy_bests``)."""

    best: BestCell
    apart: bool  # its interval is clear of every other policy's best interval


def policy_bests(sweep: Sweep, metric: str) -> list[PolicyBest]:
    """Each policy's best cell of ``metric`` (by mean, highest first) and whether its
    interval stands apart from every other policy's best: a sweep of the user's splitter
    beside ours answers "is mine better?" only where the intervals do not overlap."""
    names = list(dict.fromkeys(p.policy.name for p in sweep.points))
    bests = [b for n in names if (b := best_verdicts(sweep, [metric], n).get(metric))]
    bests.sort(key=lambda b: -float(b.cell.metrics[metric] or 0.0))
    return [
        PolicyBest(
            best=b,
            apart=all(b.low > o.high or b.high < o.low for o in bests if o is not b),
        )
        for b in bests
    ]


def policy_sentence(bests: Sequence[PolicyBest], queries: int) -> str:
    """What the policies' best cells say, side by side, without overstating."""
    if len(bests) < 2:
        return ""
    first = bests[0].best
    lead = f"{first.cell.policy.name} at {first.cell.policy.size:,} {first.cell.policy.unit}"
    if bests[0].apart:
        return f"{lead} leads on {first.metric}: its interval is clear of every other policy's"
    return (
        f"{NO_BETTER_POLICY} ({queries} queries): the best cells' {first.metric} intervals "
        f"overlap; {lead} has the highest mean"
    )


def _interval(by_key: dict[str, SweepPoint], cell: Cell, metric: str) -> tuple[float, float]:
    return bootstrap_interval(_values(by_key[cell.policy.key], cell.method, metric))
