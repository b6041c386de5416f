"""Run the asked cases in order; one failing case becomes a FAILED row, the run goes on."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from core.bench import (
    byo_cases,
    cases,
    diagnose_cases,
    embed_cases,
    eval_cases,
    gpu,
    import_cases,
    lexical_cases,
    map_cases,
    scale_cases,
    scale_corpus,
    store_cases,
    sweep_cases,
)
from core.bench.inputs import BenchInputs, BenchSettings
from core.bench.machine import load_average, machine_info
from core.bench.report import CaseResult
from core.methods import BENCHED

Thunk = Callable[[], list[CaseResult]]
Log = Callable[[str], None]


def _one(fn: Callable[[], CaseResult]) -> Thunk:
    return lambda: [fn()]


def plan(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    """``(case, label, thunk)`` for every row group the settings ask for, in order."""
    s = inputs.settings
    steps: list[tuple[str, str, Thunk]] = []
    if "parse" in s.cases:
        for path in (s.pdf, *s.other_pdfs):
            thunk = _one(partial(cases.parse_case, inputs, path))
            steps.append(("parse", f"parse {path.name}", thunk))
    if "tables" in s.cases:
        steps += _table_steps(inputs)
    if "rechunk" in s.cases:
        steps += _rechunk_steps(inputs)
    if "import" in s.cases:
        for path in import_cases.filing_paths(s.quick):
            thunk = _one(partial(import_cases.import_case, inputs, path))
            steps.append(("import", f"import {path.name}", thunk))
    no_cuda = _missing_cuda(s.device)
    model_cases = {
        BENCHED.alone: (f"{BENCHED.alone} embed", lambda: embed_cases.naive_case(inputs)),
        BENCHED.windowed: (f"{BENCHED.windowed} embed", lambda: embed_cases.late_case(inputs)),
    }
    for case, (label, fn) in model_cases.items():
        if case in s.cases:
            steps.append((case, label, _skip(case, no_cuda) if no_cuda else _one(fn)))
    if "sweep" in s.cases:
        thunk = lambda: sweep_cases.sweep_cases(inputs)  # noqa: E731
        sweep = _skip("sweep", no_cuda) if no_cuda else thunk
        steps.append(("sweep", f"{BENCHED.windowed} sweep", sweep))
    if "store" in s.cases:
        steps += _store_steps(inputs)
    if "lexical" in s.cases:
        steps += _lexical_steps(inputs)
    if "depth" in s.cases:
        for n in s.scale_sizes:
            thunk = _one(partial(diagnose_cases.depth_case, inputs, n))
            steps.append(("depth", f"full-depth rank at {n:,}", thunk))
    if "signals" in s.cases:
        steps.append(
            ("signals", "failure signals", _one(lambda: diagnose_cases.signals_case(inputs)))
        )
    if "attribution" in s.cases:
        thunk = _one(lambda: diagnose_cases.attribution_case(inputs))
        steps.append(
            (
                "attribution",
                "context attribution",
                _skip("attribution", no_cuda) if no_cuda else thunk,
            )
        )
    if "diagnose" in s.cases:
        thunk = _one(lambda: diagnose_cases.cost_case(inputs))
        steps.append(("diagnose", f"diagnosis of {diagnose_cases.COST_FAILURES} failures", thunk))
        steps.append(
            ("diagnose", "diagnosis agreement", lambda: diagnose_cases.agreement_cases(inputs))
        )
    if "compare" in s.cases or "map" in s.cases:
        steps += _map_steps(inputs)
    if "ui" in s.cases:
        steps.append(("ui", "slider move", _one(lambda: cases.ui_case(inputs))))
    if "memory" in s.cases:
        thunk = _one(lambda: cases.memory_case(inputs))
        steps.append(("memory", "peak memory", _skip("memory", no_cuda) if no_cuda else thunk))
    if "gpu" in s.cases:
        steps.append(("gpu", "long context", lambda: gpu.gpu_cases(s)))
    if "scale" in s.cases:
        steps.append(("scale", "ray indexer", lambda: _scale_rows(inputs)))
    if "import-run" in s.cases:
        thunk = _one(lambda: import_cases.run_case(inputs))
        steps.append(
            ("import-run", "import a run", _skip("import-run", no_cuda) if no_cuda else thunk)
        )
    if "ocr" in s.cases:
        from core.bench import ocr_cases

        for dpi in ocr_cases.RESOLUTIONS:
            thunk = _one(partial(ocr_cases.ocr_case, inputs, dpi))
            steps.append(("ocr", f"ocr {dpi} dpi", thunk))
        steps.append(("ocr", "ocr vicksburg", _one(partial(ocr_cases.vicksburg_case, inputs))))
    if "eval" in s.cases:
        thunk = lambda: eval_cases.eval_cases(inputs)  # noqa: E731
        steps.append(
            ("eval", "evaluation, cold and warm", _skip("eval", no_cuda) if no_cuda else thunk)
        )
    if "byo" in s.cases:
        thunk = lambda: byo_cases.byo_cases(inputs)  # noqa: E731
        steps.append(("byo", "your chunks to the first failure", thunk))
    if "scale-corpus" in s.cases:
        steps.append(("scale-corpus", "ray scale corpus", lambda: _scale_corpus_rows(inputs)))
    return steps


def _scale_rows(inputs: BenchInputs) -> list[CaseResult]:
    return scale_cases.scale_cases(inputs)


def _scale_corpus_rows(inputs: BenchInputs) -> list[CaseResult]:
    return scale_corpus.scale_corpus_cases(inputs)


def _table_steps(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    """Per table-heavy PDF of the shared corpus: parse time and typing quality."""
    from core.bench import table_cases

    return [
        ("tables", f"tables {path.name}", _one(partial(table_cases.tables_case, inputs, path)))
        for path in table_cases.table_paths(inputs.settings.quick)
    ]


def _rechunk_steps(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    """Per policy: the headline PDF alone (50 ms limit), then every other document."""
    s = inputs.settings
    groups: list[tuple[str, tuple[Path, ...]]] = [("headline", (s.pdf,))]
    if s.other_pdfs or s.texts:
        groups.append(("corpus", (*s.other_pdfs, *s.texts)))
    steps: list[tuple[str, str, Thunk]] = []
    for policy in cases.RECHUNK_POLICIES:
        for group, paths in groups:
            where = s.pdf.name if group == "headline" else f"{len(paths)} documents"
            thunk = _one(partial(cases.rechunk_case, inputs, policy, paths, group))
            steps.append(("rechunk", f"re-chunk {policy[0]}/{policy[1]} {where}", thunk))
    return steps


def _store_steps(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    steps: list[tuple[str, str, Thunk]] = [
        ("store", "store upsert/query", lambda: store_cases.store_cases(inputs))
    ]
    for n in inputs.settings.scale_sizes:
        thunk = _one(partial(store_cases.scale_case, inputs, n))
        steps.append(("store", f"store query at {n:,}", thunk))
    return steps


def _map_steps(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    """Compare's call at each scale size; the map of ``map_cases.MAP_POINTS`` points."""
    s = inputs.settings
    steps: list[tuple[str, str, Thunk]] = []
    if "compare" in s.cases:
        for n in s.scale_sizes:
            thunk = _one(partial(map_cases.compare_case, inputs, n))
            steps.append(("compare", f"compare page call at {n:,}", thunk))
    if "map" in s.cases:
        n = max(s.scale_sizes)
        thunk = partial(map_cases.map_cases, inputs, n)
        steps.append(("map", f"map of {map_cases.MAP_POINTS:,} points", thunk))
    return steps


def _lexical_steps(inputs: BenchInputs) -> list[tuple[str, str, Thunk]]:
    steps: list[tuple[str, str, Thunk]] = [
        (
            "lexical",
            f"{BENCHED.lexical} index build",
            _one(lambda: lexical_cases.build_case(inputs)),
        )
    ]
    for n in inputs.settings.scale_sizes:
        thunk = _one(partial(lexical_cases.query_case, inputs, n))
        steps.append(("lexical", f"{BENCHED.lexical} query at {n:,}", thunk))
    return steps


def _missing_cuda(device: str) -> str | None:
    """Why ``device`` cannot run the encoder here, or None."""
    if device != "cuda":
        return None
    import torch

    if torch.cuda.is_available():
        return None
    return f"--device cuda, but CUDA is not available on this machine (torch {torch.__version__})"


def _skip(case: str, reason: str) -> Thunk:
    row = CaseResult(key=f"{case}:skipped", case=case, label=f"{case} (skipped)", skipped=reason)
    return lambda: [row]


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
