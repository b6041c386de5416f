"""Diagnoses from the command line: ``eval --out`` stores the suggestion per failed query
and method, ``diagnose`` lists them (or re-diagnoses with every signal), ``check
--max-new`` gates on new failures of a cause, and triage carries the suggestion beside
the human tag. The documents are the casebook's (causes known by construction), ranked
by the trigram stand-in encoder through the model seam."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeEncoder, fake_embed_chunks

from core.cli import diagnose_cmd, main, options
from core.diagnose.casebook import build_casebook
from core.diagnose.track_record import RECORDS
from core.embed import VectorCache
from core.evaluate import load_run


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("diagnose")
    book = build_casebook(per_cause=1, families=("device", "company"))
    docs = ws / "docs"
    docs.mkdir()
    for name, text in book.sources.items():
        (docs / name).write_text(text, "utf-8")
    lines = [
        {"id": q.id, "query": q.query, "doc": q.doc, "evidence": [{"text": q.gold}],
         "cause": q.cause}
        for q in book.queries
    ]  # fmt: skip
    (ws / "q.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    return ws


REAL_LOAD_MODEL = diagnose_cmd.load_model  # the fixture below fakes it for the others


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    monkeypatch.setattr(diagnose_cmd, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks))
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(workspace / "store"))


def _eval(ws: Path, out: Path) -> list[str]:
    return [
        "eval", "--queries", str(ws / "q.jsonl"), "--docs", str(ws / "docs"), "--methods",
        "naive,bm25,contextual,late", "--k", "1,3", "--size", "300", "--overlap", "0",
        "--resamples", "10", "--json", "--out", str(out),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def saved(workspace: Path) -> Path:
    out = workspace / "run.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None))
        assert main(_eval(workspace, out)) == 0
    return out


def test_eval_out_stores_a_suggestion_for_every_failed_query_and_method(saved: Path) -> None:
    run = load_run(saved)
    failed = [(q, m) for q in run.queries for m in run.methods if q.failed[m]]
    assert len(failed) >= 10
    for record, method in failed:
        found = record.suggested[method]
        assert found.confidence in ("strong", "weak", "unclear") and found.decided_by
    for record in run.queries:  # none for what did not fail
        assert set(record.suggested) == {m for m in run.methods if record.failed[m]}
    parse = [q for q in run.queries if q.id.endswith("parse-1")]
    assert parse and all(s.cause == "parse" for q in parse for s in q.suggested.values())


def test_a_run_written_before_suggestions_reads_and_says_so(saved: Path, tmp_path, capsys):
    data = json.loads(saved.read_text("utf-8"))
    for q in data["queries"]:
        q.pop("suggested", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), "utf-8")
    assert all(not q.suggested for q in load_run(old).queries)
    assert main(["diagnose", str(old)]) == 0
    assert "stores no suggestion" in capsys.readouterr().err
    assert main(["check", "--run", str(old), "--max-new", "parse=0"]) == 2
    assert "stores no suggested causes" in capsys.readouterr().err


def test_diagnose_lists_stored_suggestions_as_a_table_by_cause(saved: Path, capsys) -> None:
    assert main(["diagnose", str(saved), "--method", "naive"]) == 0
    out = capsys.readouterr().out
    assert "(stored)" in out and "strong" in out and "total" in out
    assert "parse" in out and "naive" in out and "late" not in out.split("\n\n")[1]
    # beside the table, what each cause it suggests has been worth on blind sets
    measured = next(p for p in out.split("\n\n") if p.startswith("Measured on 429 failures"))
    shown = [line.split()[0] for line in measured.splitlines()[1:]]
    said = {c for c in RECORDS if f"\n  {c} " in out.split("\n\n")[1]}
    assert set(shown) == said and shown
    record = RECORDS[shown[0]]
    assert f"{record.readers:>4} of {record.suggested:<4}({record.share:.0%})" in measured


def test_diagnose_prints_each_failures_experiments(saved: Path, capsys) -> None:
    """The stored experiments are the explanation: printed under each failure, and in
    ``--json`` (schema 2) with their ranks before and after."""
    run = load_run(saved)
    stored = [(q, m, s) for q in run.queries for m, s in q.suggested.items() if s.experiments]
    assert stored
    assert main(["diagnose", str(saved)]) == 0
    out = capsys.readouterr().out
    for _, _, suggestion in stored[:5]:
        for made in suggestion.experiments:
            assert f"    {made['line']}" in out
    assert main(["diagnose", str(saved), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["schema"] == 2 and payload["source"] == "stored"
    for row in payload["failures"]:
        assert {"query_id", "method", "query", "cause", "confidence", "runner_up",
                "decided_by", "experiments"} <= set(row)  # fmt: skip
        for made in row["experiments"]:
            assert made["repair"] in ("boundary", "context", "parse", "method")
            assert {"before", "after", "fixes", "line"} <= set(made)
    methods = [e for r in payload["failures"] for e in r["experiments"] if e["repair"] == "method"]
    assert methods and all(" rank" in e["line"] for e in methods)


def test_diagnose_with_documents_gives_every_signal(saved: Path, workspace, capsys) -> None:
    args = ["diagnose", str(saved), "--docs", str(workspace / "docs"), "--json"]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["source"] == "diagnosed" and payload["failures"]
    stored = {(q.id, m): s for q in load_run(saved).queries for m, s in q.suggested.items()}
    for row in payload["failures"]:
        assert stored[(row["query_id"], row["method"])].cause == row["suggested"]
        kept = stored[(row["query_id"], row["method"])].experiments
        assert [e["line"] for e in kept] == [e["line"] for e in row["experiments"]]
        assert {s["cause"] for s in row["signals"]} >= {"parse", "label", "context"}
        for signal in row["signals"]:
            assert 0 <= signal["strength"] <= 1 and isinstance(signal["spans"], list)
    counts = payload["counts"]
    assert sum(sum(c.values()) for m in counts.values() for c in m.values()) == len(
        payload["failures"]
    )


def test_diagnose_refuses_documents_that_are_not_the_runs(saved: Path, tmp_path, capsys):
    (tmp_path / "other.md").write_text("# Other\n\nNothing here.\n", "utf-8")
    assert main(["diagnose", str(saved), "--docs", str(tmp_path)]) == 2
    assert "lacks" in capsys.readouterr().err
    assert main(["diagnose", str(saved), "--method", "nope"]) == 2


def test_check_gates_on_new_failures_of_a_cause(saved: Path, capsys) -> None:
    assert main(["check", "--run", str(saved), "--max-new", "parse=0"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "new parse failure(s), 0 allowed" in out
    assert main(["check", "--run", str(saved), "--max-new", "parse=50"]) == 0
    capsys.readouterr()
    # against itself as the baseline nothing is new
    args = ["check", "--run", str(saved), "--baseline", str(saved), "--max-new", "parse=0"]
    assert main([*args, "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    found = [f for f in verdict["findings"] if f["kind"] == "new-cause"]
    assert found and all(f["value"] == 0 and f["passed"] for f in found)
    assert main(["check", "--run", str(saved), "--max-new", "typo=0"]) == 2
    assert "unknown cause" in capsys.readouterr().err


def test_triage_carries_the_suggestion_beside_the_tag(saved: Path, workspace, capsys) -> None:
    db = str(workspace / "tags.sqlite")
    assert main(["triage", "sample", str(saved), "--method", "naive", "--json", "--db", db]) == 0
    sample = json.loads(capsys.readouterr().out)["sample"]
    assert sample and all(f["suggested"]["cause"] for f in sample)
    first = sample[0]
    assert main(["triage", "tag", str(saved), first["id"], "other", "--method", "naive",
                 "--db", db]) == 0  # fmt: skip
    capsys.readouterr()
    out = workspace / "tags.jsonl"
    assert main(["triage", "export", str(saved), "--out", str(out), "--db", db]) == 0
    (line,) = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert line["tag"] == "other" and line["suggested"] == first["suggested"]["cause"]
    assert line["confidence"] == first["suggested"]["confidence"]
    assert main(["triage", "sample", str(saved), "--method", "naive", "--db", db]) == 0
    assert "suggested: " in capsys.readouterr().out


def test_diagnose_cache_keeps_the_repairs_vectors(tmp_path: Path) -> None:
    import argparse

    from core.chunk import chunk_document, policy_from_args
    from core.formats import load_document, parse_document
    from tests.conftest import SAMPLE_DOCS

    args = argparse.Namespace(model=None, cache=str(tmp_path / "vectors"))
    encoder, embed = REAL_LOAD_MODEL(args)
    doc = load_document(SAMPLE_DOCS / "state_of_the_union.md")
    chunks = chunk_document(doc, parse_document(doc).blocks, policy_from_args("fixed", 400, 0))
    first = embed(doc, chunks[:3], "naive", encoder)
    assert any(p.is_file() for p in (tmp_path / "vectors").rglob("*"))  # kept on disk
    _, later = REAL_LOAD_MODEL(args)  # the next diagnose reads them back
    again = later(doc, chunks[:3], "naive", encoder)
    assert [list(r.vector) for r in again] == [list(r.vector) for r in first]
    cache = later.keywords["cache"]
    assert isinstance(cache, VectorCache) and cache.hits == 3 and cache.misses == 0
