"""Triage: reproducible failure samples, SQLite tags that survive a restart, exports."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import LabelError
from core.evaluate import (
    CAUSES,
    EvalConfig,
    GoldSpan,
    LabelledQuery,
    TriageStore,
    default_triage_path,
    export_tags,
    read_queries,
    resolve_queries,
    run_eval,
    sample_failures,
    tag_query,
)
from core.evaluate.run_file import EvalRun
from core.provenance.types import ChunkPolicy, Document
from tests.fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks

ROOT = Path(__file__).resolve().parent.parent
POLICY = ChunkPolicy(name="fixed", size=800, overlap=100)
WORDS = [
    "harbour",
    "glacier",
    "violin",
    "quarry",
    "orchid",
    "tundra",
    "lantern",
    "cobalt",
    "meadow",
    "saddle",
    "pepper",
    "canyon",
]


def _corpus() -> tuple[list[Document], list[LabelledQuery]]:
    paragraphs = [
        f"The {w} paragraph talks about {w} things, number {i}." for i, w in enumerate(WORDS)
    ]
    doc = make_document("notes", "\n\n".join(paragraphs))
    queries = []
    for i, para in enumerate(paragraphs):
        start = doc.text.index(para)
        gold = GoldSpan(char_start=start, char_end=start + len(para), text=para)
        # every third query asks about another paragraph's word: likely a failure
        asked = WORDS[(i + 5) % len(WORDS)] if i % 3 == 0 else WORDS[i]
        queries.append(
            LabelledQuery(id=f"q{i:02d}", query=f"{asked} things", doc="notes", gold=(gold,))
        )
    return [doc], queries


@pytest.fixture(scope="module")
def run() -> EvalRun:
    docs, queries = _corpus()
    return run_eval(
        queries,
        docs,
        EvalConfig(policy=POLICY, methods=("naive", "late"), ks=(1,)),
        encoder=FakeEncoder(),
        embed=fake_embed_chunks,
        chunker=lambda doc: paragraph_chunks(doc, POLICY),
    )


def test_sample_is_reproducible_and_holds_only_failures(run: EvalRun) -> None:
    failed = {q.id for q in run.queries if q.failed["late"]}
    assert len(failed) >= 3
    first = sample_failures(run, n=3, seed=0)
    assert [f.query_id for f in first] == [f.query_id for f in sample_failures(run, n=3, seed=0)]
    assert all(f.method == "late" and f.query_id in failed for f in first)
    assert len({f.query_id for f in first}) == 3
    everything = sample_failures(run, "late", n=100, seed=4)
    assert sorted(f.query_id for f in everything) == sorted(failed)
    orders = {tuple(f.query_id for f in sample_failures(run, n=100, seed=s)) for s in range(6)}
    assert len(orders) > 1
    failure = first[0]
    assert len(failure.hits) == run.text_k and failure.gold and failure.tag is None
    assert failure.rank != 1


def test_bad_sample_requests(run: EvalRun) -> None:
    with pytest.raises(LabelError, match="not in run"):
        sample_failures(run, "contextual")
    with pytest.raises(LabelError):
        sample_failures(run, n=0)


def test_tags_survive_a_restart_and_another_process(run: EvalRun, tmp_path: Path) -> None:
    db = tmp_path / "store" / "triage.sqlite"
    query = sample_failures(run, n=1)[0]
    tag_query(TriageStore(db), run, query.query_id, "boundary", note="split at a comma")
    reopened = TriageStore(db)
    (tag,) = reopened.tags(run.run_id)
    assert (tag.query_id, tag.cause, tag.note, tag.method) == (
        query.query_id,
        "boundary",
        "split at a comma",
        "late",
    )
    assert tag.doc_sha256 == query.doc_sha256 and tag.tagged_at
    script = (
        "import sys; from core.evaluate import TriageStore; "
        "print(TriageStore(sys.argv[1]).tags(sys.argv[2])[0].cause)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(db), run.run_id],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert out.stdout.strip() == "boundary"
    tagged = {f.query_id: f.tag for f in sample_failures(run, n=100, store=reopened) if f.tag}
    assert list(tagged) == [query.query_id] and tagged[query.query_id].cause == "boundary"


def test_retagging_upserts(run: EvalRun, tmp_path: Path) -> None:
    store = TriageStore(tmp_path / "t.sqlite")
    query_id = run.queries[0].id
    tag_query(store, run, query_id, "boundary", note="first look")
    tag_query(store, run, query_id, "context")
    (tag,) = store.tags(run.run_id)
    assert tag.cause == "context" and tag.note == "first look"
    tag_query(store, run, query_id, "label", note="unanswerable")
    (tag,) = store.tags(run.run_id)
    assert tag.cause == "label" and tag.note == "unanswerable"
    other_version = store.tag(
        run_id=run.run_id, query_id=query_id, doc_sha256="f" * 64, cause="parse"
    )
    assert other_version.cause == "parse" and len(store.tags(run.run_id)) == 2
    counts = store.tag_counts(run.run_id)
    assert list(counts) == list(CAUSES) and counts["label"] == 1 and counts["parse"] == 1
    assert sum(counts.values()) == 2
    assert store.tag_counts("run-other") == dict.fromkeys(CAUSES, 0)
    assert store.untag(run_id=run.run_id, query_id=query_id, doc_sha256="f" * 64)


def test_bad_tags_are_user_errors(run: EvalRun, tmp_path: Path) -> None:
    store = TriageStore(tmp_path / "t.sqlite")
    with pytest.raises(LabelError, match="unknown cause"):
        tag_query(store, run, run.queries[0].id, "typo")
    with pytest.raises(LabelError, match="not in run"):
        tag_query(store, run, "no-such-query", "other")
    with pytest.raises(LabelError, match="not in run"):
        tag_query(store, run, run.queries[0].id, "other", method="contextual")


def test_exports_round_trip_as_a_query_set(run: EvalRun, tmp_path: Path) -> None:
    store = TriageStore(tmp_path / "t.sqlite")
    picked = sample_failures(run, n=2, seed=1)
    tag_query(store, run, picked[0].query_id, "vocabulary", note="rare word")
    tag_query(store, run, picked[1].query_id, "boundary")
    count = export_tags(store, run, tmp_path / "regression.jsonl")
    assert count == 2
    regression = read_queries(tmp_path / "regression.jsonl")
    assert sorted(q.id for q in regression) == sorted(f.query_id for f in picked)
    by_id = {q.id: q for q in regression}
    first = by_id[picked[0].query_id]
    assert first.meta["tag"] == "vocabulary" and first.meta["note"] == "rare word"
    assert first.meta["run_id"] == run.run_id and first.gold == picked[0].gold
    docs, _ = _corpus()
    resolved, unresolved = resolve_queries(regression, docs)
    assert len(resolved) == 2 and not unresolved
    assert export_tags(store, run, tmp_path / "tags.csv") == 2
    with (tmp_path / "tags.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["cause"] for r in rows} == {"vocabulary", "boundary"}
    assert all(r["run_id"] == run.run_id and r["gold"] for r in rows)
    with pytest.raises(LabelError, match=".jsonl or .csv"):
        export_tags(store, run, tmp_path / "tags.txt")


def test_default_path_follows_the_store_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "index"))
    assert default_triage_path() == tmp_path / "index" / "triage.sqlite"
    assert TriageStore().path == tmp_path / "index" / "triage.sqlite"
    monkeypatch.delenv("CHUNKSCOPE_STORE")
    monkeypatch.chdir(tmp_path)
    assert default_triage_path() == tmp_path / ".chunkscope" / "triage.sqlite"


def test_a_version_1_triage_file_gains_the_suggestion_and_agreement_is_counted(tmp_path):
    import sqlite3

    from core.evaluate import TriageStore, agreement

    path = tmp_path / "triage.sqlite"
    with sqlite3.connect(path) as conn:  # the schema version 1 wrote
        conn.execute(
            "CREATE TABLE tags (run_id TEXT NOT NULL, query_id TEXT NOT NULL, doc_sha256 TEXT "
            "NOT NULL, cause TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', method TEXT NOT NULL "
            "DEFAULT '', tagged_at TEXT NOT NULL, PRIMARY KEY (run_id, query_id, doc_sha256))"
        )
        conn.execute("INSERT INTO tags VALUES ('r', 'old', 's', 'label', '', 'late', 't')")
        conn.execute("PRAGMA user_version = 1")
    store = TriageStore(path)
    (old,) = store.tags("r")
    assert old.cause == "label" and old.suggested == ""  # kept, with no suggestion
    store.tag(run_id="r", query_id="a", doc_sha256="s", cause="context", suggested="context")
    store.tag(run_id="r", query_id="b", doc_sha256="s", cause="boundary", suggested="context")
    assert agreement(store, "r") == (2, 1)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 9")
    with pytest.raises(LabelError, match="newer Chunkscope"):
        TriageStore(path)


def test_one_tag_per_failure_and_method(run: EvalRun, tmp_path: Path) -> None:
    both = [q for q in run.queries if q.failed["naive"] and q.failed["late"]]
    if not both:
        pytest.skip("no query fails under both methods in this run")
    query = both[0]
    store = TriageStore(tmp_path / "t.sqlite")
    tag_query(store, run, query.id, "vocabulary", method="late", note="rare word")
    tag_query(store, run, query.id, "method", method="naive")  # a tag under naive ...
    tags = store.tags(run.run_id)
    assert [(t.method, t.cause) for t in tags] == [("late", "vocabulary"), ("naive", "method")]
    # ... overwrites nothing: each method's failure keeps its own reading
    [late] = [f for f in sample_failures(run, "late", n=20, store=store) if f.query_id == query.id]
    [naive] = [
        f for f in sample_failures(run, "naive", n=20, store=store) if f.query_id == query.id
    ]
    assert late.tag is not None and late.tag.cause == "vocabulary"
    assert naive.tag is not None and naive.tag.cause == "method"
    assert store.tag_counts(run.run_id)["vocabulary"] == 1
    assert export_tags(store, run, tmp_path / "tags.csv") == 2  # a row per failure and method
    with (tmp_path / "tags.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["method"], r["cause"]) for r in rows) == [
        ("late", "vocabulary"), ("naive", "method"),
    ]  # fmt: skip
    assert store.untag(run_id=run.run_id, query_id=query.id, doc_sha256=query.doc_sha256,
                       method="naive")  # fmt: skip
    assert [t.method for t in store.tags(run.run_id)] == ["late"]


def test_a_version_3_file_keeps_its_tags_and_gains_per_method_keys(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "triage.sqlite"
    causes = ", ".join(repr(c) for c in CAUSES)
    with sqlite3.connect(path) as conn:  # the schema version 3 wrote: one tag per query
        conn.execute(
            "CREATE TABLE tags (run_id TEXT NOT NULL, query_id TEXT NOT NULL, doc_sha256 TEXT "
            f"NOT NULL, cause TEXT NOT NULL CHECK (cause IN ({causes})), note TEXT NOT NULL "
            "DEFAULT '', method TEXT NOT NULL DEFAULT '', tagged_at TEXT NOT NULL, suggested "
            "TEXT NOT NULL DEFAULT '', PRIMARY KEY (run_id, query_id, doc_sha256))"
        )
        conn.execute("INSERT INTO tags VALUES ('r', 'q', 's', 'label', 'n', 'late', 't', '')")
        conn.execute("PRAGMA user_version = 3")
    store = TriageStore(path)
    store.tag(run_id="r", query_id="q", doc_sha256="s", cause="method", method="bm25")
    assert [(t.method, t.cause, t.note) for t in store.tags("r")] == [
        ("bm25", "method", ""), ("late", "label", "n"),
    ]  # fmt: skip
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4


def test_a_query_tagged_under_two_methods_must_pass_under_each(run: EvalRun) -> None:
    from core.tune.gate import must_pass_findings

    query = run.queries[0]
    found = must_pass_findings(run, {query.id: ("late", "naive", "bm25")}, {})
    both = [f for f in found if f.query_id == query.id]  # the check's run holds only its cases
    assert [f.method for f in both] == ["late", "naive"]  # bm25 is not in this run
    assert [f.passed for f in both] == [not query.failed["late"], not query.failed["naive"]]
    gone = must_pass_findings(run, {"q-gone": ("late", "naive")}, {"q-gone": "no such doc"})
    assert [(f.method, f.passed) for f in gone if f.query_id == "q-gone"] == [
        ("late, naive", False)
    ]
