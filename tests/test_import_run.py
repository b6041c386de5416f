"""Bring your own retrieval runs: log shapes, hits by id or by text, labels, depth, hits
outside the set, metrics checked against hand-computed numbers, and bad input.

The OpenInference spans use the attribute names of ``openinference-semantic-conventions``
(a pinned dev requirement); the Ragas rows follow its ``SingleTurnSample`` fields
(``user_input``, ``retrieved_contexts``, ``reference``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from openinference.semconv.trace import DocumentAttributes, SpanAttributes

from core import methods as method_registry
from core.chunk import policy_registry as policy_registry
from core.cli import main, options
from core.cli.run_table import print_run
from core.evaluate import LabelledQuery, load_run
from core.evaluate.imported_run import import_run
from core.evaluate.labels import GoldSpan
from core.evaluate.traces import TraceError, read_trace
from core.formats import load_document
from core.imported import import_chunks, save_chunk_set
from core.imported.shapes import ForeignChunk
from tests.test_embed_http import server
from workbench.evaluate.triage import run_rank_text

__all__ = ["server"]  # a fixture: the fake embeddings server on loopback

PARAGRAPHS = [
    "Harbour ships dock at the eastern quay after dark and the master logs each arrival.",
    "The lighthouse keeper trims the lamp wick twice a night in winter storms.",
    "Fishing boats unload cod and haddock at dawn beside the old market hall.",
    "The ferry to the island leaves at nine and returns before the tide turns.",
    "Gulls nest on the breakwater every spring and the council counts them in May.",
    "A new crane lifts containers onto trucks bound for the inland depots.",
]


@pytest.fixture(autouse=True)
def _clean_registries() -> Iterator[None]:
    yield
    for name in policy_registry.fixed_names():
        policy_registry.unregister_fixed(name)
    for name in ("yours", "bm25x", "theirs"):
        method_registry.unregister(name)


@pytest.fixture
def port(tmp_path: Path):
    """The harbour file, its chunk set (one chunk a paragraph, ids c1..c6) and labels."""
    text = "\n\n".join(PARAGRAPHS) + "\n"
    path = tmp_path / "harbour.md"
    path.write_text(text, encoding="utf-8")
    doc = load_document(path)
    rows = [
        ForeignChunk(index=i, text=p, source="harbour.md", claimed_start=text.index(p),
                     claimed_end=None, page=None, foreign_id=f"c{i + 1}")
        for i, p in enumerate(PARAGRAPHS)
    ]  # fmt: skip
    chunk_set, _ = import_chunks(rows, [doc], name="harbour", shape="chunks", origin="test")

    def gold(paragraph: int) -> tuple[GoldSpan, ...]:
        start = text.index(PARAGRAPHS[paragraph])
        return (GoldSpan(char_start=start, char_end=start + 30),)

    labels = [
        LabelledQuery(id="q1", query="who trims the lamp", doc="harbour", gold=gold(1)),
        LabelledQuery(id="q2", query="when do gulls nest", doc="harbour", gold=gold(4)),
        LabelledQuery(id="q3", query="where do ships dock", doc="harbour", gold=gold(0)),
        LabelledQuery(
            id="q9", query="never asked of the retriever", doc="harbour", gold=gold(5)
        ),  # fmt: skip
    ]
    return doc, chunk_set, labels, tmp_path


HITS = [
    {"query_id": "q1", "query": "who trims the lamp", "hits": [
        {"chunk_id": "c3", "score": 0.9}, {"chunk_id": "c2", "score": 0.8}]},
    {"query_id": "q2", "query": "when do gulls nest", "hits": [{"chunk_id": "c5", "score": 0.7}]},
    {"query_id": "q3", "query": "where do ships dock", "hits": [
        {"chunk_id": "c4", "score": 0.6}, {"chunk_id": "not-ours", "score": 0.5},
        {"chunk_id": "c1", "score": 0.4}]},
    {"query_id": "q7", "query": "an unlabelled question", "hits": [{"chunk_id": "c6"}]},
]  # fmt: skip


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def imported(port, data: bytes, **kwargs):
    doc, chunk_set, labels, _ = port
    shape, trace = read_trace(data, "log.jsonl")
    return import_run(trace, labels, chunk_set, [doc], encoder=FakeEncoder(), shape=shape,
                      embed=fake_embed_chunks, **kwargs)  # fmt: skip


def test_the_logged_ranking_gives_hand_computed_metrics(port) -> None:
    run = imported(port, jsonl(HITS))
    assert run.methods == ("yours",)
    # q1: gold at rank 2; q2: rank 1; q3: rank 3 (the hit outside the set keeps rank 2)
    assert run.metrics["yours"]["mrr"] == pytest.approx((1 / 2 + 1 + 1 / 3) / 3)
    assert run.metrics["yours"]["hit@1"] == pytest.approx(1 / 3)
    assert run.metrics["yours"]["hit@1"] is not None and run.n["yours"]["mrr"] == 3
    # the log is 3 deep: hit@5 cannot be told from it, so it is n/a, not a miss
    assert run.metrics["yours"]["hit@5"] is None and run.n["yours"]["hit@5"] == 0
    assert not any(r.failed["yours"] for r in run.queries)  # every gold within the log
    q3 = run.query("q3")
    assert q3.ranks["yours"] == 3 and [h.rank for h in q3.top["yours"]] == [1, 3]
    assert [h.score for h in q3.top["yours"]] == [0.6, 0.4]  # the logged scores
    assert q3.metrics["yours"]["span_validity"] == pytest.approx(2 / 3)  # one hit uncitable
    info = run.imported
    assert info["labelled"] == 3 and info["labels_not_logged"] == ["q9"]
    assert [u["query_id"] for u in info["unlabelled"]] == ["q7"]
    assert info["outside"] == [
        {"query_id": "q3", "rank": 2, "hit": "not-ours", "why": "chunk id 'not-ours' is not in "
         "the chunk set"}
    ]  # fmt: skip
    assert run.policy["name"] == "harbour"
    assert run.policy_label == "harbour"  # the set's name, not "harbour-chars-N-0"
    shown = io.StringIO()
    print_run(run, shown)
    assert " policy harbour " in shown.getvalue() and "harbour-chars" not in shown.getvalue()


def test_our_methods_rank_exactly_the_sets_spans(port) -> None:
    doc, chunk_set, _, _ = port
    run = imported(port, jsonl(HITS), methods=("naive", "bm25"))
    assert run.methods == ("yours", "naive", "bm25")
    assert {"naive-yours", "bm25-yours"} <= set(run.deltas)
    spans = {(c.anchor.char_start, c.anchor.char_end) for c in chunk_set.chunks}
    for record in run.queries:
        for method in ("naive", "bm25"):
            for hit in record.top[method]:
                cited = run.chunks[hit.chunk_id]
                assert (cited.char_start, cited.char_end) in spans
                assert doc.text[cited.char_start : cited.char_end] == cited.quote


def test_a_five_deep_log_at_k10_is_na_past_its_depth(port) -> None:
    """Five hits a query scored at k=10: the @10 metrics and nDCG@10 are n/a for the log
    (not misses, so not below a method that ranks deeper); those at k <= 5 are counted."""
    five = [{"query_id": q, "hits": [{"chunk_id": f"c{i}"} for i in order]}
            for q, order in (("q1", (1, 3, 4, 5, 6)), ("q2", (5, 1, 2, 3, 4)),
                             ("q3", (2, 3, 4, 5, 6)))]  # fmt: skip
    run = imported(port, jsonl(five), methods=("bm25",), ks=(1, 5, 10))
    yours, ours = run.metrics["yours"], run.metrics["bm25"]
    assert yours["hit@5"] == pytest.approx(1 / 3) and run.n["yours"]["hit@5"] == 3
    for name in ("hit@10", "recall@10", "ndcg@10"):
        assert yours[name] is None and run.n["yours"][name] == 0, name
        assert ours[name] is not None and run.n["bm25"][name] == 3, name
    assert run.deltas["bm25-yours"].get("hit@10") is None  # no delta against n/a
    q1 = run.query("q1")
    assert q1.failed["yours"] and q1.ranks["yours"] is None
    # full ranks read "of 6" (the set's chunks bm25 ranked), never "of 5" (the log's hits)
    assert {r.scope_size for r in run.queries} == {6}
    said = run_rank_text(run, q1, "yours")
    assert said == "not in its log's 5 hits" and "top 10" not in said
    assert run_rank_text(run, q1, "bm25").endswith(" of 6")


def test_a_log_deeper_than_the_cut_keeps_the_full_rank(port) -> None:
    deep = [{"query_id": "q2", "hits": [{"chunk_id": f"c{i}"} for i in (1, 2, 3, 4, 6)] * 2
             + [{"chunk_id": "c5"}]}]  # fmt: skip
    run = imported(port, jsonl(deep))
    record = run.query("q2")
    assert record.ranks["yours"] is None and record.full_ranks["yours"] == 11
    assert record.metrics["yours"]["mrr"] == 0.0
    assert record.scope_size == 11
    shallow = imported(port, jsonl([{"query_id": "q2", "hits": [{"chunk_id": "c1"}]}]))
    assert shallow.query("q2").full_ranks["yours"] is None  # beyond the log's depth of 1
    assert shallow.imported["depth"] == 1


def test_hits_given_by_text_ragas_and_openinference(port) -> None:
    ragas = [
        {"user_input": "who trims the lamp", "retrieved_contexts": [PARAGRAPHS[2], PARAGRAPHS[1]],
         "response": "the keeper", "reference": "The lighthouse keeper"},
        {"user_input": "when do gulls nest",
         "retrieved_contexts": [PARAGRAPHS[4].replace(" ", "\n", 3)]},  # another line-wrap
    ]  # fmt: skip
    run = imported(port, jsonl(ragas))
    assert run.query("q1").ranks["yours"] == 2 and run.query("q2").ranks["yours"] == 1
    assert run.imported["shape"] == "ragas" and not run.imported["outside"]
    documents = SpanAttributes.RETRIEVAL_DOCUMENTS
    nested = {
        "name": "retrieve", "span_kind": "RETRIEVER", "context": {"span_id": "s1"},
        "attributes": {
            SpanAttributes.INPUT_VALUE: "where do ships dock",
            documents: [
                {DocumentAttributes.DOCUMENT_ID: "x", DocumentAttributes.DOCUMENT_CONTENT:
                 PARAGRAPHS[0], DocumentAttributes.DOCUMENT_SCORE: 0.42},
            ],
        },
    }  # fmt: skip
    flat = {
        "name": "retrieve", "span_kind": "RETRIEVER", "context.span_id": "s2",
        f"attributes.{SpanAttributes.INPUT_VALUE}": "when do gulls nest",
        f"attributes.{documents}": [
            {DocumentAttributes.DOCUMENT_ID: "c5", DocumentAttributes.DOCUMENT_SCORE: 3.5}],
    }  # fmt: skip
    llm = {"name": "llm", "span_kind": "LLM", "attributes": {SpanAttributes.INPUT_VALUE: "x"}}
    run = imported(port, jsonl([llm, nested, flat]))
    assert run.imported["shape"] == "openinference" and run.imported["queries_in_trace"] == 2
    assert run.query("q3").ranks["yours"] == 1 and run.query("q2").ranks["yours"] == 1
    assert run.query("q3").top["yours"][0].score == 0.42


def test_cli_import_run_writes_a_run_triage_and_check_read(
    port, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, chunk_set, labels, tmp = port
    store = tmp / "store"
    save_chunk_set(store / "chunksets", chunk_set)
    (tmp / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    (tmp / "log.jsonl").write_bytes(jsonl(HITS))
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    argv = ["import-run", str(tmp / "log.jsonl"), "--chunks", "harbour", "--queries",
            str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"), "--store", str(store),
            "--methods", "bm25", "--k", "1", "--out", str(tmp / "run.json")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "yours" in out and "1 outside chunk set harbour" in out
    assert "q3 rank 2: chunk id 'not-ours' is not in the chunk set" in out
    method_registry.unregister("yours")  # a fresh process knows it from the run file alone
    run = load_run(tmp / "run.json")
    assert run.methods == ("yours", "bm25") and run.method("yours").family == "external"
    failed = [(q, m) for q in run.queries for m in run.methods if q.failed[m]]
    assert failed  # each failure stored with its suggestion and experiments, as eval --out
    for record, method in failed:
        kept = record.suggested[method]
        assert kept.cause and kept.experiments
        other = "bm25" if method == "yours" else "yours"
        assert any(e["repair"] == "method" and e["method"] == other for e in kept.experiments)
    assert main(["diagnose", str(tmp / "run.json")]) == 0
    assert "stores no suggestion" not in capsys.readouterr().err
    assert main(["triage", "sample", str(tmp / "run.json"), "--method", "yours"]) == 0
    sampled = capsys.readouterr().out
    assert "q1" in sampled and "q3" in sampled and "2 of 3 queries failed" in sampled
    gate = ["check", "--run", str(tmp / "run.json"), "--method", "yours", "--min"]
    assert main([*gate, "mrr=0.6"]) == 0
    assert "PASS  yours  mrr 0.611 >= 0.600" in capsys.readouterr().out
    assert main([*gate, "mrr=0.7"]) == 1


def test_reading_run_files_registers_nothing_and_each_run_names_its_retriever(
    port, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs of two retrievers (one logged scores, one ranks only), read in a process
    that never imported them: the registry is as it was, and each run answers for its own
    retriever's score scale, in its numbers, its triage and its gate."""
    doc, chunk_set, labels, tmp = port
    store = tmp / "store"
    save_chunk_set(store / "chunksets", chunk_set)
    (tmp / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    unscored = [{**q, "hits": [{"chunk_id": h["chunk_id"]} for h in q["hits"]]} for q in HITS]
    (tmp / "scored.jsonl").write_bytes(jsonl(HITS))
    (tmp / "ranked.jsonl").write_bytes(jsonl(unscored))
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    for log, name in (("scored", "yours"), ("ranked", "theirs")):
        argv = ["import-run", str(tmp / f"{log}.jsonl"), "--chunks", "harbour", "--queries",
                str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"), "--store",
                str(store), "--name", name, "--methods", "bm25", "--k", "1",
                "--out", str(tmp / f"{name}.json")]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        method_registry.unregister(name)  # as a fresh process that only reads the files
    capsys.readouterr()
    before = method_registry.base_methods()

    yours, theirs = load_run(tmp / "yours.json"), load_run(tmp / "theirs.json")

    assert method_registry.base_methods() == before
    for name in ("yours", "theirs"):
        with pytest.raises(method_registry.UnknownMethodError):
            method_registry.get(name)
    assert yours.method("yours").family == theirs.method("theirs").family == "external"
    assert yours.method("yours").score.short == "score"  # the logged scores
    assert theirs.method("theirs").score.short == "1/rank"  # ranks only
    assert yours.method("bm25") == method_registry.get("bm25")
    with pytest.raises(method_registry.UnknownMethodError):
        yours.method("theirs")  # a run knows its own retriever, not another run's
    assert yours.stored_methods == theirs.stored_methods == ("bm25",)
    assert yours.metrics["yours"]["mrr"] == pytest.approx(0.611, abs=1e-3)
    assert yours.metrics["yours"] == theirs.metrics["theirs"]  # same ranks, other scale
    assert yours.query("q1").top["yours"][0].score == 0.9
    gate = ["check", "--run", str(tmp / "theirs.json"), "--method", "theirs", "--min"]
    assert main([*gate, "mrr=0.6"]) == 0
    assert "PASS  theirs  mrr 0.611 >= 0.600" in capsys.readouterr().out
    assert main(["triage", "sample", str(tmp / "yours.json"), "--method", "yours"]) == 0
    assert "2 of 3 queries failed" in capsys.readouterr().out
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(store))  # whose chunk set diagnose re-chunks
    assert main(["diagnose", str(tmp / "theirs.json"), "--docs", str(tmp / "harbour.md")]) == 0
    assert "theirs" in capsys.readouterr().out  # re-ranked at full depth, the log read as is
    assert method_registry.base_methods() == before
    with pytest.raises(method_registry.UnknownMethodError):
        method_registry.get("theirs")


def test_bad_logs_are_one_line(port, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TraceError, match="records are not query hits"):
        read_trace(jsonl([{"question_id": 1}]), "log.jsonl")
    with pytest.raises(TraceError, match="hit 1 has neither a chunk_id nor a text"):
        read_trace(jsonl([{"query_id": "q1", "hits": [{"score": 1}]}]), "log.jsonl")
    with pytest.raises(TraceError, match="none of the log's 1 queries is in the query set"):
        imported(port, jsonl([{"query_id": "zz", "query": "unknown", "hits": []}]))
    with pytest.raises(TraceError, match="holds query 'q1' twice"):
        imported(port, jsonl([HITS[0], HITS[0]]))
    code = main(["import-run", "log.jsonl", "--chunks", "nope", "--queries", "q.jsonl",
                 "--store", str(port[3] / "empty")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "no chunk set 'nope'" in err and err.count("\n") == 1


def test_import_run_embeds_over_http_and_refuses_late(port, server, capsys) -> None:
    """naive over the team's own model through an OpenAI-compatible server on loopback,
    beside the log; late, which needs token states, refused in one line."""
    doc, chunk_set, labels, tmp = port
    store = tmp / "store"
    save_chunk_set(store / "chunksets", chunk_set)
    (tmp / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    (tmp / "log.jsonl").write_bytes(jsonl(HITS))
    base = ["import-run", str(tmp / "log.jsonl"), "--chunks", "harbour", "--queries",
            str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"), "--store", str(store),
            "--embed-url", server.url, "--embed-model", "team-model"]  # fmt: skip
    assert main([*base, "--methods", "naive", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"].startswith("http:team-model@") and out["methods"] == ["yours", "naive"]
    assert any(PARAGRAPHS[0] in text for text in server.inputs)  # the set's spans, embedded
    assert main([*base, "--methods", "late"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "late" in err


def test_your_retrievers_failures_are_diagnosed_without_the_model(port) -> None:
    """Nothing of an external retriever is scored by the model (no repair of its own, no
    restatement read): its first failure never waits for the weights to load."""
    from core.diagnose.run_failures import diagnose_run

    class Untouchable(FakeEncoder):
        def encode_texts(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("the model was asked to embed for an external method")

        def encode_query(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("the model was asked to embed for an external method")

    doc, *_ = port
    missed = [{"query_id": "q2", "query": "when do gulls nest", "hits": [
        {"chunk_id": "c1", "score": 0.7}, {"chunk_id": "c3", "score": 0.6}]}]  # fmt: skip
    run = imported(port, jsonl(missed))
    assert run.query("q2").failed["yours"]
    found = diagnose_run(run, {doc.doc_id: doc}, method="yours", encoder=Untouchable(),
                         embed=fake_embed_chunks)  # fmt: skip
    assert found and all(
        d.evidence is not None and d.evidence.restated == 0 for d in found.values()
    )
