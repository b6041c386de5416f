"""Paired bootstrap intervals for the difference between two methods on the same queries.

For per-query values ``a`` and ``b`` (same queries, same order) the delta is
``mean(b - a)``. Its interval is the percentile bootstrap: ``resamples`` resamples of
the query indices with replacement, drawn by ``numpy.random.default_rng(seed)``, so the
same inputs and seed always give the same interval. Resampling queries (not values) keeps
each query's pair together, which is what makes it *paired*.

How sure a delta is (``verdict``): "clear" only when its interval excludes zero *and* it
rests on at least ``FEW_QUERIES`` queries (below that a percentile bootstrap interval is
too narrow to trust, and one query moves a mean by ``1/n``). Otherwise the verdict says
how many more queries would make a difference of the size seen detectable
(``queries_to_detect``): the interval's half-width shrinks as ``1/sqrt(n)``, so with the
bootstrap's standard error ``se = half-width / z`` a two-sided 95% test finds a true
difference ``d`` with 80% power once ``n >= n_now * ((z + z_power) * se / |d|)^2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.provenance.serial import Fields

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95
FEW_QUERIES = 30  # under this many queries a finding is stated as a small sample's
Z_95, Z_POWER_80 = 1.96, 0.8416


@dataclass(frozen=True, slots=True, kw_only=True)
class DeltaInterval:
    """``delta = mean(b - a)`` over ``n`` paired queries, ``[low, high]`` its interval."""

    delta: float
    low: float
    high: float
    n: int
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def excludes_zero(self) -> bool:
        """True when the interval lies wholly above or below zero."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, object]:
        return {
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "delta") -> DeltaInterval:
        fields = Fields(data, where)
        return cls(
            delta=fields.number("delta"),
            low=fields.number("low"),
            high=fields.number("high"),
            n=fields.integer("n"),
            confidence=fields.number("confidence", DEFAULT_CONFIDENCE),
        )

    @classmethod
    def read(cls, data: object, where: str) -> DeltaInterval:
        return cls.from_dict(data, where)


def paired_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> DeltaInterval | None:
    """Interval of ``mean(b - a)``; ``None`` when there are no pairs."""
    first = np.asarray(a, dtype=np.float64)
    second = np.asarray(b, dtype=np.float64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError("paired values must be two 1-D sequences of the same length")
    if not 0 < confidence < 1 or resamples < 1:
        raise ValueError("confidence must be in (0, 1) and resamples at least 1")
    n = first.shape[0]
    if n == 0:
        return None
    diff = second - first
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    means = diff[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return DeltaInterval(
        delta=float(diff.mean()), low=float(low), high=float(high), n=n, confidence=confidence
    )


def metric_deltas(
    rows_a: Sequence[Mapping[str, float | None]],
    rows_b: Sequence[Mapping[str, float | None]],
    names: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, DeltaInterval | None]:
    """Per metric, the paired delta ``b - a`` over the queries where both are defined.

    ``rows_a[i]`` and ``rows_b[i]`` are the same query's metrics under the two methods.
    """
    if len(rows_a) != len(rows_b):
        raise ValueError("paired rows must describe the same queries")
    out: dict[str, DeltaInterval | None] = {}
    for name in names:
        pairs = [
            (x, y)
            for row_a, row_b in zip(rows_a, rows_b, strict=True)
            if (x := row_a.get(name)) is not None and (y := row_b.get(name)) is not None
        ]
        out[name] = paired_bootstrap(
            [p[0] for p in pairs], [p[1] for p in pairs], resamples=resamples, seed=seed
        )
    return out


def queries_to_detect(delta: DeltaInterval, size: float | None = None) -> int | None:
    """Queries in all that would detect a difference of ``size`` (default: the delta
    seen) with 80% power at 95%, from the bootstrap's standard error (see the module
    docstring); None when there is no difference to detect or no spread to scale."""
    target = abs(delta.delta if size is None else size)
    half = (delta.high - delta.low) / 2
    if target <= 0 or half <= 0 or delta.n < 2:
        return None
    se = half / Z_95
    return int(np.ceil(delta.n * ((Z_95 + Z_POWER_80) * se / target) ** 2))


def verdict(delta: DeltaInterval) -> str:
    """How sure the delta is, in a few words (see the module docstring)."""
    if delta.low == delta.high == 0:
        return "no change"
    needed = queries_to_detect(delta)
    more = needed - delta.n if needed is not None and needed > delta.n else None
    if delta.excludes_zero:
        if delta.n >= FEW_QUERIES:
            return "clear"
        then = f"~{more:,} more queries to be sure" if more else f"confirm on {FEW_QUERIES}+"
        return f"likely, on only {delta.n} queries: {then}"
    if more is None:
        return "could be noise"
    return f"could be noise: ~{more:,} more queries would show a Δ this size"
