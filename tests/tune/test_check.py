"""`chunkscope check`: exit 0 on a pass, 1 on a regression (naming the queries), 2 on bad
input; thresholds, a baseline with allowed drops, tagged failures as must-pass cases.

The small shared set of ``conftest.py`` (chat logs and State of the Union, 24 questions)
under bm25 with the fake encoder: 200-character chunks have a higher MRR on it than
800-character ones (0.793 against 0.769), so the 800 run regresses from the 200 one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.evaluate import TriageStore, load_run
from tests.tune.conftest import small_docs


def _check(root: Path, size: int, *extra: str) -> list[str]:
    base = [
        "check",
        "--docs",
        *small_docs(),
        "--policy",
        "fixed",
        "--methods",
        "bm25",
        "--size",
        str(size),
        "--k",
        "1,5",
    ]
    return [*base, *extra]


@pytest.fixture
def runs(small_set: Path, fake_model, capsys) -> dict[int, Path]:
    out = {}
    for size in (200, 800):
        out[size] = small_set / f"run{size}.json"
        eval_args = ["eval", "--queries", str(small_set / "q.jsonl"), "--docs", *small_docs()]
        more = ["--policy", "fixed", "--methods", "bm25", "--size", str(size), "--k", "1,5"]
        more += ["--out", str(out[size])]
        assert main([*eval_args, *more, "--json"]) == 0
    capsys.readouterr()
    return out


def test_a_threshold_crossed_exits_1_and_one_met_exits_0(small_set: Path, runs, capsys) -> None:
    queries = ["--queries", str(small_set / "q.jsonl")]
    assert main(_check(small_set, 800, *queries, "--min", "hit@5=0.5,mrr=0.5")) == 0
    shown = capsys.readouterr().out
    assert "PASS  bm25  hit@5" in shown and "result: PASS" in shown
    assert main(_check(small_set, 800, *queries, "--min", "mrr=0.99")) == 1
    shown = capsys.readouterr().out
    assert "FAIL  bm25  mrr" in shown and "result: FAIL (1 of 1 checks)" in shown


def test_a_drop_against_the_baseline_names_the_regressed_queries(
    small_set: Path, runs, capsys
) -> None:
    queries = ["--queries", str(small_set / "q.jsonl"), "--max-drop", "mrr=0.01"]
    worse = load_run(runs[800])
    better = load_run(runs[200])
    assert better.metrics["bm25"]["mrr"] > worse.metrics["bm25"]["mrr"] + 0.01
    assert main(_check(small_set, 800, *queries, "--baseline", str(runs[200]), "--json")) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert not verdict["passed"] and verdict["run_id"] == worse.run_id
    named = {r["query_id"]: r for r in verdict["regressions"]}
    for query in worse.queries:  # every query ranked worse than in the baseline is named
        was, now = better.query(query.id).ranks["bm25"], query.ranks["bm25"]
        worse_now = (now or 99) > (was or 99)
        assert (query.id in named) == worse_now
        if worse_now:
            assert (named[query.id]["before"], named[query.id]["after"]) == (was, now)
    assert main(_check(small_set, 800, *queries, "--baseline", str(runs[200]))) == 1
    table = capsys.readouterr().out
    first = verdict["regressions"][0]
    assert f"{first['query_id']} (bm25): was found at rank {first['before']}, now" in table
    assert main(_check(small_set, 200, *queries, "--baseline", str(runs[800]))) == 0


def test_tagged_failures_must_pass(small_set: Path, runs, capsys, tmp_path: Path) -> None:
    run = load_run(runs[800])
    failing = [q for q in run.queries if q.failed["bm25"]]
    passing = [q for q in run.queries if not q.failed["bm25"]]
    assert failing and passing
    db = tmp_path / "triage.sqlite"
    store = TriageStore(db)
    for query in (failing[0], passing[0]):
        store.tag(run_id=run.run_id, query_id=query.id, doc_sha256=query.doc_sha256,
                  cause="boundary", method="bm25")  # fmt: skip
    tagged = ["--tagged", str(runs[800]), "--triage-db", str(db)]
    assert main(_check(small_set, 800, *tagged)) == 1
    shown = capsys.readouterr().out
    assert f"FAIL  must-pass {failing[0].id} (bm25): hit@5" in shown
    assert f"PASS  must-pass {passing[0].id} (bm25): hit@5 rank" in shown
    store.untag(run_id=run.run_id, query_id=failing[0].id, doc_sha256=failing[0].doc_sha256)
    assert main(_check(small_set, 800, *tagged)) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--min", "mrr"], "--min takes metric=value pairs"),
        (["--min", "mrr=high"], "--min takes metric=value pairs"),
        (["--min", "recall@99=0.5"], "is not a metric of this run"),
        (["--max-drop", "mrr=0.1"], "--max-drop needs --baseline"),
        ([], "nothing to check"),
        (["--baseline", "missing.json"], "not found"),
    ],
)
def test_bad_input_exits_2(small_set: Path, fake_model, capsys, extra, message) -> None:
    args = _check(small_set, 800, "--queries", str(small_set / "q.jsonl"), *extra)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_malformed_query_set_exits_2(small_set: Path, fake_model, capsys, tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "query": "x"}\nnot json\n', "utf-8")
    assert main(_check(small_set, 800, "--queries", str(bad), "--min", "mrr=0.1")) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_a_tagged_query_whose_document_changed_fails_unchecked(
    small_set: Path, runs, capsys, tmp_path: Path
) -> None:
    run = load_run(runs[800])
    query = next(q for q in run.queries if not q.failed["bm25"])
    db = tmp_path / "triage.sqlite"
    TriageStore(db).tag(
        run_id=run.run_id, query_id=query.id, doc_sha256=query.doc_sha256, cause="label"
    )
    changed = tmp_path / f"{query.doc_id}.md"
    source = next(p for p in small_docs() if Path(p).stem == query.doc_id)
    changed.write_text(Path(source).read_text("utf-8") + "\nOne more line.\n", "utf-8")
    others = [p for p in small_docs() if Path(p).stem != query.doc_id]
    args = ["check", "--docs", str(changed), *others, "--methods", "bm25", "--policy", "fixed"]
    args += ["--size", "800"]
    assert main([*args, "--tagged", str(runs[800]), "--triage-db", str(db)]) == 1
    shown = capsys.readouterr().out
    assert f"FAIL  must-pass {query.id} (any method): not checked: document changed" in shown
