"""The ``byo`` bench case on its ``--quick`` input (one FinanceBench filing, 63 chunks,
one round): a LangChain pipeline's rows from import to the first failure's cause, against
parsing the same file in the same run. No assertion here is about speed."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest

from core.bench import BenchSettings, run_bench
from core.bench.byo_cases import DEPTH, bm25_log, filing_paths, pipeline_rows
from core.diagnose.casebook import CAUSES
from core.evaluate.labels import Evidence, LabelledQuery
from tests.conftest import CORPUS

pytest.importorskip("langchain_text_splitters")

MGM = CORPUS / "financebench" / "pdfs" / "MGMRESORTS_2022Q4_EARNINGS.pdf"


def quick_settings(tmp_path: Path) -> BenchSettings:
    return BenchSettings(
        pdf=MGM, cases=("byo",), quick=True, warmup=0, repeats=1, cache_dir=tmp_path / "cache"
    )


@pytest.fixture(scope="module")
def byo_rows(tmp_path_factory: pytest.TempPathFactory):
    results, _ = run_bench(quick_settings(tmp_path_factory.mktemp("byo")))
    return results


def test_first_failure_is_reported_against_parse_in_the_same_run(byo_rows) -> None:
    assert [r.key for r in byo_rows] == ["byo:first-failure", "byo:again"]
    for row in byo_rows:  # the first import, and the same import with the page texts kept
        assert row.error is None and row.skipped is None
        assert row.baseline_label == "parse of the same 1 filing"
        assert len(row.ours_samples) == len(row.baseline_samples) == 1
        assert row.ratio == pytest.approx(row.ours_samples[0] / row.baseline_samples[0])
        assert row.met is not None  # both limits are set: 60 s and 1.5x the parse
        assert row.max_ours == 60.0 and row.max_ratio == 1.5


def test_every_claim_was_checked_and_the_first_failure_has_a_cause(byo_rows) -> None:
    extra = byo_rows[0].extra
    assert extra["again_s"] == byo_rows[1].ours
    chunks = extra["chunks"]
    assert chunks == len(pipeline_rows([MGM], 1000, 150)) > 0
    for counts in (extra["claims"], extra["page_claims"]):
        assert counts["unchecked"] == 0 and counts["ok"] + counts["wrong"] == chunks
    assert extra["failed"] >= 1 and extra["first_failure"].startswith("financebench_id_")
    assert extra["suggested"] in (*CAUSES, "unclear")
    assert set(extra["stages_s"]) == {"load", "import_chunks", "import_run", "first_failure"}
    # the claims were pending when the first failure was shown, then checked and the run
    # made again, outside the time to the first failure
    assert extra["claims_checked_s"] > 0 and extra["suggested_checked"] in (*CAUSES, "unclear")
    assert 0 <= extra["moved"] <= chunks and extra["failed_checked"] >= 1
    assert any("claims pending" in note for note in byo_rows[0].notes)


def test_a_set_whose_claims_cannot_be_checked_fails_the_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.imported import loader_text

    monkeypatch.setattr(loader_text.PageTexts, "page", lambda self, number: None)
    results, _ = run_bench(quick_settings(tmp_path))
    (row,) = results
    assert row.status == "FAILED" and "was checked" in (row.error or "")


def test_rows_are_what_pypdfloader_and_the_splitter_make() -> None:
    rows = pipeline_rows([MGM], 1000, 150)
    texts = [p.extract_text().strip() for p in pypdf.PdfReader(MGM).pages]
    for row in rows:
        meta = row["metadata"]
        assert set(meta) == {"source", "total_pages", "page", "page_label", "start_index"}
        start, text = meta["start_index"], row["page_content"]
        assert texts[meta["page"]][start : start + len(text)] == text
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["metadata"]["page"] for r in rows} == set(range(len(texts)))


def test_the_log_is_a_deterministic_bm25_top_five_of_row_ids() -> None:
    rows = pipeline_rows(filing_paths(quick=True), 1000, 150)
    said = (Evidence(text="x"),)
    asked = [
        LabelledQuery(id="q1", query="EBITDAR of MGM China", doc="d", evidence=said),
        LabelledQuery(id="q2", query="zzzzq qqqqz", doc="d", evidence=said),
    ]
    log = bm25_log(rows, asked)
    assert log == bm25_log(rows, asked)
    ids = {r["id"] for r in rows}
    first, second = log
    assert len(first.hits) == DEPTH and all(h.chunk_id in ids for h in first.hits)
    assert [h.rank for h in first.hits] == list(range(1, DEPTH + 1))
    scores = [h.score for h in first.hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert "china" in rows[int(first.hits[0].chunk_id.split("-")[1])]["page_content"].lower()
    # nothing matches: every score 0, the first rows in order
    assert [h.chunk_id for h in second.hits] == [r["id"] for r in rows[:DEPTH]]


def test_the_case_leaves_the_registries_as_it_found_them(byo_rows) -> None:
    from core.chunk import policy_registry
    from core.errors import ChunkscopeError
    from core.methods import get

    assert byo_rows  # the case ran in this process
    assert policy_registry.find("byo_pypdf") is None  # no stray policy for later callers
    with pytest.raises(ChunkscopeError):
        get("yours")
