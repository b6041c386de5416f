"""The benchmark's machinery on tiny inputs with one repeat: rows, ratios, table, JSON,
skips. No assertion here is about speed."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from core.bench import BenchSettings, CaseResult, format_table, run_bench, settings_dict, to_json
from core.bench.gpu import EncoderShape, flop_ratio, gpu_cases, long_context_rows
from core.bench.inputs import check_spans, default_settings
from core.bench.report import COLUMNS, format_value
from core.bench.timing import interleaved, median, percentile
from core.cli import main
from tests.conftest import PDF_DIR

TINY_PDF = PDF_DIR / "pypdfsf_google-doc-document.pdf"
TINY_TEXT = (
    "# Tiny corpus\n\nA first paragraph. It has two sentences.\n\n"
    "## Second part\n\n- an item\n- another item\n\nClosing words, with a comma.\n"
)


def tiny_settings(tmp_path: Path, cases: tuple[str, ...], **changes: object) -> BenchSettings:
    text = tmp_path / "tiny.md"
    text.write_text(TINY_TEXT, encoding="utf-8")
    base = BenchSettings(
        pdf=TINY_PDF,
        texts=(text,),
        cases=cases,
        warmup=0,
        repeats=1,
        embed_repeats=1,
        embed_chars=1_500,
        memory_chars=1_500,
        scale_sizes=(40,),
        scale_queries=2,
        ui_page=1,
        cache_dir=tmp_path / "cache",
    )
    return replace(base, **changes)


@pytest.fixture(scope="module")
def cheap_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("bench")
    settings = tiny_settings(tmp, ("parse", "rechunk", "store", "ui", "gpu"))
    results, machine = run_bench(settings)
    return settings, results, machine


def test_every_asked_case_gives_rows_without_failures(cheap_run) -> None:
    _, results, _ = cheap_run
    assert {r.case for r in results} == {"parse", "rechunk", "store", "ui", "gpu"}
    assert [r.label for r in results if r.error] == []
    assert len({r.key for r in results}) == len(results)
    # 4 policies x (headline, corpus of one text file)
    assert sum(r.case == "rechunk" for r in results) == 8
    # upsert + query per document, plus one row per scale size
    assert sum(r.case == "store" for r in results) == 3


def test_ratios_are_ours_over_baseline_measured_in_the_same_run(cheap_run) -> None:
    _, results, _ = cheap_run
    compared = [r for r in results if r.baseline is not None]
    assert compared, "no row had a baseline"
    for row in compared:  # the formula itself: test_ratio_pairs_rounds_and_falls_back...
        assert row.ours is not None and row.ours > 0 and row.baseline > 0
        assert len(row.ours_samples) == len(row.baseline_samples) >= 1
        per_round = [o / b for o, b in zip(row.ours_samples, row.baseline_samples, strict=True)]
        assert min(per_round) * (1 - 1e-9) <= row.ratio <= max(per_round) * (1 + 1e-9)
        slower = replace(row, baseline_samples=tuple(2 * b for b in row.baseline_samples))
        assert math.isclose(slower.ratio, row.ratio / 2)  # read from this run's own samples
        assert row.met in (True, False)


def test_ratio_pairs_rounds_and_falls_back_to_medians() -> None:
    row = CaseResult(
        key="k", case="c", label="l", ours=2.0, baseline=1.0,
        ours_samples=(2.0, 4.0, 1.0), baseline_samples=(1.0, 4.0, 2.0),
    )  # fmt: skip
    assert math.isclose(row.ratio, math.sqrt(2.0))  # rounds 2.0 and 1.0; 0.5 has no pair
    assert replace(row, ours_samples=(), baseline_samples=()).ratio == 2.0
    # who runs second profits from the first (a warmed cache): each order once cancels it
    warmed = replace(row, ours_samples=(3.0, 2.0) * 2, baseline_samples=(2.0, 3.0) * 2)
    assert math.isclose(warmed.ratio, 1.0)  # per round 1.5, 0.67: their median would be 1.08
    assert replace(row, ours_samples=(2.0,), baseline_samples=(1.0,)).ratio == 2.0


def test_table_has_the_columns_and_one_line_per_row(cheap_run) -> None:
    _, results, machine = cheap_run
    table = format_table(results, machine)
    lines = table.splitlines()
    assert lines[0].startswith("Machine: ")
    header = lines[2].split()
    assert tuple(header) == COLUMNS
    body = lines[4 : 4 + len(results)]
    for row, line in zip(results, body, strict=True):
        assert line.startswith(row.label)
        assert line.rstrip().endswith(row.status)
    assert "Notes:" in table


def test_json_is_keyed_by_case_with_every_field(cheap_run) -> None:
    settings, results, machine = cheap_run
    payload = json.loads(json.dumps(to_json(results, machine, settings_dict(settings))))
    assert set(payload) == {"machine", "settings", "cases"}
    assert set(payload["cases"]) == {r.key for r in results}
    parse_row = next(v for k, v in payload["cases"].items() if k.startswith("parse:"))
    assert set(parse_row) >= {
        "ours", "baseline", "ratio", "target", "met", "skipped", "notes", "unit", "extra",
    }  # fmt: skip
    assert payload["machine"]["usable_cores"] >= 1
    assert "torch" in payload["machine"]["libraries"]
    assert payload["settings"]["pdf"] == str(TINY_PDF)


def test_gpu_case_skips_on_cpu_with_its_reason_and_flop_ratio(cheap_run) -> None:
    _, results, _ = cheap_run
    gpu = [r for r in results if r.case == "gpu"]
    assert len(gpu) == 3
    for row in gpu:
        assert row.skipped and "--device cuda" in row.skipped
        assert row.met is None and row.status == "skipped"
        assert row.target.startswith("FLOPs ")
    assert [round(r.extra["flop_ratio"], 2) for r in gpu] == [1.3, 1.7, 2.5]


def test_cuda_without_a_gpu_names_the_missing_cuda(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    settings = tiny_settings(tmp_path, ("naive", "late", "memory", "gpu"), device="cuda")
    assert all("CUDA is not available" in (r.skipped or "") for r in gpu_cases(settings))
    results, _ = run_bench(settings)
    assert {r.case for r in results} == {"naive", "late", "memory", "gpu"}
    assert all(r.skipped and "CUDA is not available" in r.skipped for r in results)


def test_flop_ratio_follows_the_formula() -> None:
    d = 768
    for length in (2048, 4096, 8192):
        assert math.isclose(flop_ratio(length), (24 * d + 4 * length) / (24 * d + 4 * 512))
    assert math.isclose(flop_ratio(8192), 2.5)


def test_long_context_timing_runs_on_cpu_with_a_tiny_encoder() -> None:
    shape = EncoderShape(layers=1, hidden=32, heads=2, ffn=128, positions=256)
    rows = long_context_rows(
        device="cpu", lengths=(128, 256), dtypes=("fp32", "bf16"), shape=shape, chunk=64,
        warmup=0, repeats=1,
    )  # fmt: skip
    assert [r.key for r in rows] == ["gpu:128:fp32", "gpu:256:fp32", "gpu:128:bf16", "gpu:256:bf16"]
    assert all(r.ratio is not None and r.baseline_label.endswith("x64") for r in rows)


def test_interleaved_rotates_order_passes_steps_and_drops_warmup() -> None:
    calls: list[tuple[str, int]] = []
    checked: list[tuple[str, object]] = []

    def contender(name: str):
        def run(step: int) -> int:
            calls.append((name, step))
            return step

        return run

    timings = interleaved(
        {"a": contender("a"), "b": contender("b")},
        warmup=1,
        repeats=3,
        check=lambda name, result: checked.append((name, result)),
    )
    assert calls == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2), ("b", 3), ("a", 3)]
    assert len(checked) == 8
    assert {name: len(t.samples_s) for name, t in timings.items()} == {"a": 3, "b": 3}


def test_median_and_percentile() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)
    with pytest.raises(ValueError):
        median([])


def test_met_needs_every_limit() -> None:
    row = CaseResult(key="k", case="c", label="l", ours=0.06, baseline=0.1, max_ratio=1.0)
    assert row.met is True
    assert replace(row, max_ours=0.05).met is False
    assert replace(row, baseline=0.05).met is False
    assert replace(row, skipped="why").met is None
    assert replace(row, max_ratio=None).met is None
    assert format_value(0.0123, "s") == "12.3 ms" and format_value(2.5, "s") == "2.50 s"


def test_provenance_check_rejects_an_inexact_span() -> None:
    from core.formats import load_document

    doc = load_document(TINY_TEXT.encode(), name="tiny.md")

    class Span:
        char_start, char_end, text = 2, 6, "Tiny"

    check_spans(doc, [Span()], "chunk")
    Span.text = "tiny"
    with pytest.raises(AssertionError, match="not exact"):
        check_spans(doc, [Span()], "chunk")


def test_missing_corpus_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHUNKSCOPE_SHARED", str(tmp_path))
    with pytest.raises(Exception, match="CHUNKSCOPE_SHARED"):
        default_settings()
    assert main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: the benchmark corpus is missing") and "\n" not in err


def test_unknown_case_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "parse,bogus"]) == 2
    assert "bogus" in capsys.readouterr().err


@pytest.mark.slow
def test_model_cases_run_on_a_tiny_document(tmp_path: Path) -> None:
    settings = tiny_settings(tmp_path, ("naive", "late", "memory"))
    results, _ = run_bench(settings)
    by_case = {r.case: r for r in results}
    assert [r.label for r in results if r.error or r.skipped] == []
    assert by_case["naive"].extra["max_abs_diff"] < 1e-4
    assert by_case["late"].ratio is not None and by_case["late"].extra["flop_ratio"] > 0
    peaks = by_case["memory"].extra["peak_mib"]
    assert 0 < peaks["imports"] <= peaks["late"] == by_case["memory"].ours


def test_diagnosis_cost_takes_the_first_failures_of_a_run_in_order() -> None:
    from dataclasses import dataclass, field

    from core.bench.diagnose_cases import first_failures

    @dataclass(frozen=True)
    class Record:
        id: str
        failed: dict = field(default_factory=dict)

    @dataclass(frozen=True)
    class Run:
        methods: tuple
        queries: tuple

    run = Run(
        methods=("naive", "late", "bm25"),
        queries=(
            Record("a", {"naive": True, "late": False, "bm25": True}),
            Record("b", {"naive": False, "late": False, "bm25": False}),
            Record("c", {"naive": True, "late": True, "bm25": True}),
            Record("d", {"naive": True, "late": True, "bm25": True}),
        ),
    )
    cut = first_failures(run, 4)
    assert [q.id for q in cut.queries] == ["a", "b", "c"]
    assert cut.queries[2].failed == {"naive": True, "late": True, "bm25": False}
    assert cut.queries[0] == run.queries[0]
    failures = [(q.id, m) for q in cut.queries for m in run.methods if q.failed[m]]
    assert failures == [("a", "naive"), ("a", "bm25"), ("c", "naive"), ("c", "late")]
    with pytest.raises(RuntimeError, match="has 8 failures, not 9"):
        first_failures(run, 9)
