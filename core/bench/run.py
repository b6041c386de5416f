"""Run the asked cases in order; one failing case becomes a FAILED row, the run goes on."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from core.bench.inputs import BenchInputs, BenchSettings
from core.bench.machine import load_average, machine_info
from core.bench.report import CaseResult

Thunk = Callable[[], list[CaseResult]]
Log = Callable[[str], None]


def _one(fn: Callable[[], CaseResult]) -> Thunk:
    return lambda: [fn()]


def plan(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    """``(case, label, thunk)`` for every row group the settings ask for, in order."""
    from core.bench import cases, embed_cases, gpu, store_cases

    s = inputs.settings
    steps: list[tuple[str, str, Thunk]] = []
    if "parse" in s.cases:
        for path in (s.pdf, *s.other_pdfs):
            steps.append(
                ("parse", f"parse {path.name}", _one(lambda p=path: cases.parse_case(inputs, p)))
            )
    if "rechunk" in s.cases:
        groups = [("geotopo", (s.pdf,))]
        if s.other_pdfs or s.texts:
            groups.append(("corpus", (*s.other_pdfs, *s.texts)))
        for policy in cases.RECHUNK_POLICIES:
            for group, paths in groups:
                label = f"re-chunk {policy[0]}/{policy[1]} {group}"
                steps.append(
                    (
                        "rechunk",
                        label,
                        _one(
                            lambda p=policy, a=paths, g=group: cases.rechunk_case(inputs, p, a, g)
                        ),
                    )
                )
    if "naive" in s.cases:
        steps.append(("naive", "naive embed", _one(lambda: embed_cases.naive_case(inputs))))
    if "late" in s.cases:
        steps.append(("late", "late embed", _one(lambda: embed_cases.late_case(inputs))))
    if "store" in s.cases:
        steps.append(("store", "store upsert/query", lambda: store_cases.store_cases(inputs)))
        for n in s.scale_sizes:
            steps.append(
                (
                    "store",
                    f"store query at {n:,}",
                    _one(lambda n=n: store_cases.scale_case(inputs, n)),
                )
            )
    if "ui" in s.cases:
        steps.append(("ui", "slider move", _one(lambda: cases.ui_case(inputs))))
    if "memory" in s.cases:
        steps.append(("memory", "peak memory", _one(lambda: cases.memory_case(inputs))))
    if "gpu" in s.cases:
        steps.append(("gpu", "long context", lambda: gpu.gpu_cases(s)))
    return steps


def run_bench(
    settings: BenchSettings, log: Log | None = None
) -> tuple[list[CaseResult], dict[str, Any]]:
    """Every asked row and the machine record (with load averages at start and end)."""
    import torch

    machine = machine_info(settings.device)
    started = time.perf_counter()
    inputs = BenchInputs(settings)
    results: list[CaseResult] = []
    for case, label, thunk in plan(inputs):
        if log is not None:
            log(f"{label} ...")
        step_started = time.perf_counter()
        try:
            rows = thunk()
        except Exception as exc:  # a broken case must not hide the others' numbers
            rows = [_failed(case, label, exc)]
        results.extend(rows)
        if log is not None:
            log(f"{label}: {time.perf_counter() - step_started:.1f} s")
    machine["torch_threads"] = torch.get_num_threads()
    machine["load_average_1m_end"] = load_average()
    machine["elapsed_s"] = round(time.perf_counter() - started, 1)
    return results, machine


def _failed(case: str, label: str, exc: Exception) -> CaseResult:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return CaseResult(
        key=f"{case}:{label.replace(' ', '-')}:failed",
        case=case,
        label=label,
        error=f"{type(exc).__name__}: {message}",
    )


def settings_dict(settings: BenchSettings) -> dict[str, Any]:
    """The settings as JSON-ready values (paths as strings)."""
    out = asdict(settings)
    for key, value in out.items():
        if isinstance(value, tuple):
            out[key] = [str(v) if hasattr(v, "parts") else v for v in value]
        elif hasattr(value, "parts"):
            out[key] = str(value)
    return out
