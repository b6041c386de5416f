"""Benchmark rows, the printed table and the JSON object.

A row holds our median and the baseline's median from the same interleaved run, in the
row's ``unit`` (seconds for times, MiB for memory). ``ratio`` comes from ``ours /
baseline`` within each round (the two ran back to back, so a load change on the machine
between rounds cancels out). Rounds alternate which contender runs first
(``timing.interleaved``), and the second call of a round can profit from what the first
warmed (a store query repeats the same vector): so two consecutive rounds, one of each
order, are combined by their geometric mean, and the ratio is the median of those pairs.
With a single round it is that round's ratio; without paired samples, the ratio of the
medians. A target is met when every limit the row has holds: ``ratio <= max_ratio`` and
``ours <= max_ours``; a row without limits only reports (``met`` is ``None``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Unit = Literal["s", "MiB", "share"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """One row of the benchmark table; ``key`` is unique in a run (``case:detail``)."""

    key: str
    case: str
    label: str
    unit: Unit = "s"
    ours: float | None = None
    baseline: float | None = None
    baseline_label: str = ""
    max_ratio: float | None = None
    max_ours: float | None = None
    target: str = ""
    skipped: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    ours_samples: tuple[float, ...] = ()
    baseline_samples: tuple[float, ...] = ()

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.baseline:
            return None
        pairs = zip(self.ours_samples, self.baseline_samples, strict=False)
        per_round = [o / b for o, b in pairs if b > 0]
        if not per_round or len(self.ours_samples) != len(self.baseline_samples):
            return self.ours / self.baseline
        if len(per_round) == 1:
            return per_round[0]
        both_orders = zip(per_round[0::2], per_round[1::2], strict=False)
        return statistics.median(math.sqrt(a * b) for a, b in both_orders)

    @property
    def met(self) -> bool | None:
        """True/False against the row's limits; None when skipped, failed or unlimited."""
        if self.skipped or self.error or (self.max_ratio is None and self.max_ours is None):
            return None
        if self.max_ratio is not None and (self.ratio is None or self.ratio > self.max_ratio):
            return False
        return not (self.max_ours is not None and (self.ours is None or self.ours > self.max_ours))

    @property
    def status(self) -> str:
        if self.error:
            return "FAILED"
        if self.skipped:
            return "skipped"
        return {True: "yes", False: "NO", None: "-"}[self.met]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "label": self.label,
            "unit": self.unit,
            "ours": _finite(self.ours),
            "baseline": _finite(self.baseline),
            "baseline_label": self.baseline_label,
            "ratio": _finite(self.ratio),
            "target": self.target,
            "max_ratio": self.max_ratio,
            "max_ours": self.max_ours,
            "met": self.met,
            "skipped": self.skipped,
            "error": self.error,
            "notes": list(self.notes),
            "extra": self.extra,
            "ours_samples": list(self.ours_samples),
            "baseline_samples": list(self.baseline_samples),
        }


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def format_value(value: float | None, unit: Unit) -> str:
    """``12.3 ms`` / ``2.45 s`` for seconds, ``512 MiB`` for memory, ``-`` for nothing."""
    if value is None:
        return "-"
    if unit == "MiB":
        return f"{value:,.0f} MiB"
    if unit == "share":  # a proportion of judgements, not a time
        return f"{value:.0%}"
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    if value < 1.0:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


COLUMNS = ("case", "ours", "baseline", "ratio", "target", "met")


def table_rows(results: Sequence[CaseResult]) -> list[tuple[str, ...]]:
    """One tuple per row, in ``COLUMNS`` order (strings as printed)."""
    rows: list[tuple[str, ...]] = []
    for r in results:
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else "-"
        baseline = format_value(r.baseline, r.unit)
        if r.baseline_label and r.baseline is not None:
            baseline = f"{baseline} ({r.baseline_label})"
        rows.append(
            (r.label, format_value(r.ours, r.unit), baseline, ratio, r.target or "-", r.status)
        )
    return rows


def format_table(results: Sequence[CaseResult], machine: Mapping[str, Any]) -> str:
    """The machine line, the aligned table, then every row's notes and reasons."""
    rows = [COLUMNS, *table_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [machine_line(machine), ""]
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    details = [
        f"- {r.label}: {text}"
        for r in results
        for text in (
            *([f"skipped: {r.skipped}"] if r.skipped else []),
            *([f"FAILED: {r.error}"] if r.error else []),
            *r.notes,
        )
    ]
    if details:
        lines += ["", "Notes:", *details]
    return "\n".join(lines)


def machine_line(machine: Mapping[str, Any]) -> str:
    libs = machine.get("libraries", {})
    versions = ", ".join(f"{k} {v}" for k, v in libs.items() if v)
    load = machine.get("load_average_1m_start")
    load_end = machine.get("load_average_1m_end")
    load_text = f"load {load} -> {load_end}" if load is not None else "load unknown"
    return (
        f"Machine: {machine.get('usable_cores')} usable cores "
        f"({machine.get('cpu_count')} CPUs), torch threads {machine.get('torch_threads')}, "
        f"device {machine.get('device')}, {load_text}; "
        f"PDF text reader {machine.get('pdf_text_reader', 'unknown')}; {versions}"
    )


def to_json(
    results: Sequence[CaseResult], machine: Mapping[str, Any], settings: Mapping[str, Any]
) -> dict[str, Any]:
    """``{"machine", "settings", "cases": {key: row}}``; keys are unique per run."""
    cases: dict[str, Any] = {}
    for r in results:
        if r.key in cases:
            raise ValueError(f"duplicate benchmark key {r.key!r}")
        cases[r.key] = r.to_dict()
    return {"machine": dict(machine), "settings": dict(settings), "cases": cases}
