"""Timing: warm-up, interleaved repeats, medians.

Contenders of one case run in the same loop: each round runs every contender once, in an
order that rotates from round to round, so load from other processes on a shared machine
hits all of them alike, and none always runs first (cold caches) or last. Each call gets
the step number (warm-up steps first, then timed ones) so a case can give every step
fresh parameters, as a slider move does. As in ``timeit``, the cyclic garbage collector
is off during a timed call (a collection pass over a large heap takes a quarter second
and would land on whichever call triggered it); it is back on between calls. A
``check`` runs on every result, untimed.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

T = TypeVar("T")

Step = Callable[[int], object]
Check = Callable[[str, object], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Wall-clock seconds of the timed runs, in run order."""

    samples_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        return median(self.samples_s)

    @property
    def min_s(self) -> float:
        return min(self.samples_s)

    def percentile_s(self, q: float) -> float:
        return percentile(self.samples_s, q)


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("no samples")
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated ``q``-th percentile, ``q`` in ``[0, 100]``."""
    if not values:
        raise ValueError("no samples")
    if not 0 <= q <= 100:
        raise ValueError("q must be within [0, 100]")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """``(seconds, result)`` of one call, with the cyclic garbage collector paused."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - started
    finally:
        if was_on:
            gc.enable()
    return elapsed, result


def interleaved(
    contenders: Mapping[str, Step],
    *,
    warmup: int,
    repeats: int,
    check: Check | None = None,
) -> dict[str, Timing]:
    """Median-ready timings of every contender, run round-robin (see the module doc).

    Round ``r`` (warm-up rounds included) calls each contender with ``step=r``; the first
    ``warmup`` rounds are not recorded.
    """
    if repeats < 1 or warmup < 0:
        raise ValueError("need repeats >= 1 and warmup >= 0")
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    for step in range(warmup + repeats):
        shift = step % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed, result = timed(partial(contenders[name], step))
            if check is not None:
                check(name, result)
            if step >= warmup:
                samples[name].append(elapsed)
    return {name: Timing(samples_s=tuple(values)) for name, values in samples.items()}
