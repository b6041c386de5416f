"""The runner with a fake encoder: record shapes, consistency, determinism, scope, ties;
one real-model run on a small shared corpus (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.evaluate import (
    EvalConfig,
    GoldSpan,
    LabelledQuery,
    compare_runs,
    delta_pairs,
    import_chunking_eval,
    load_run,
    metrics_by_doc,
    run_eval,
    save_run,
)
from core.provenance.types import ChunkPolicy, Document
from tests.conftest import EVAL_DIR, TEXT_CORPORA
from tests.fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks

POLICY = ChunkPolicy(name="fixed", size=800, overlap=100)
PARAGRAPHS = {
    "fruit": [
        "Apples grow on trees in temperate orchards and are picked in autumn.",
        "Bananas are tropical and ripen after harvest in warm storage rooms.",
        "Cherries bloom in spring; the blossoms draw crowds in many cities.",
    ],
    "space": [
        "The rocket engine burns liquid oxygen and kerosene during the ascent.",
        "Orbital mechanics decide how much fuel a transfer to the moon needs.",
        "Astronauts train underwater to rehearse work outside the station.",
    ],
}


def _docs() -> list[Document]:
    return [make_document(name, "\n\n".join(parts)) for name, parts in PARAGRAPHS.items()]


def _gold(doc: Document, paragraph: int) -> GoldSpan:
    text = PARAGRAPHS[doc.doc_id][paragraph]
    start = doc.text.index(text)
    return GoldSpan(char_start=start, char_end=start + len(text), text=text)


def _queries(docs: list[Document]) -> list[LabelledQuery]:
    by_id = {d.doc_id: d for d in docs}
    asks = [
        ("q-apple", "fruit", 0, "when are apples picked from orchard trees"),
        ("q-banana", "fruit", 1, "do bananas ripen after the harvest"),
        ("q-rocket", "space", 0, "what does the rocket engine burn"),
        ("q-train", "space", 2, "how do astronauts train for work outside"),
        ("q-orbit", "space", 1, "fuel for a transfer to the moon"),
    ]
    queries = [
        LabelledQuery(id=qid, query=text, doc=f"{doc}.txt", gold=(_gold(by_id[doc], part),))
        for qid, doc, part, text in asks
    ]
    queries.append(LabelledQuery(id="q-lost", query="x", doc="absent", gold=queries[0].gold))
    return queries


def _run(docs: list[Document], **config: object):
    settings = {"policy": POLICY, "methods": ("naive", "late", "contextual"), "ks": (1, 3)}
    settings.update(config)
    ticks: list[tuple[int, int]] = []
    result = run_eval(
        _queries(docs),
        docs,
        EvalConfig(**settings),  # type: ignore[arg-type]
        encoder=FakeEncoder(),
        embed=fake_embed_chunks,
        chunker=lambda doc: paragraph_chunks(doc, POLICY),
        progress=lambda done, total: ticks.append((done, total)),
    )
    return result, ticks


def test_records_are_consistent_with_the_metrics() -> None:
    run, ticks = _run(_docs())
    assert run.methods == ("naive", "late", "contextual")
    assert run.n_queries == 5 and [u.query_id for u in run.unresolved] == ["q-lost"]
    assert ticks[-1] == (18, 18)  # 2 documents x 3 chunks x 3 methods
    for record in run.queries:
        for method in run.methods:
            values = record.metrics[method]
            rank = record.ranks[method]
            assert values["mrr"] == (1 / rank if rank else 0.0)
            assert record.failed[method] == (values["hit@3"] == 0.0)
            hits = run.hits(record.id, method)
            assert [h.rank for h, _ in hits] == list(range(1, len(hits) + 1))
            assert [h.score for h, _ in hits] == sorted((h.score for h, _ in hits), reverse=True)
    for method in run.methods:
        assert run.n[method]["hit@1"] == 5 and run.n[method]["doc_hit@1"] == 5
        assert run.metrics[method]["span_validity"] == 1.0
    assert run.query("q-apple").ranks["naive"] == 1


def test_per_document_breakdown_adds_up_to_the_totals() -> None:
    run, _ = _run(_docs())
    rows = metrics_by_doc(run)
    assert [r.doc_id for r in rows] == ["fruit", "space"]
    assert sum(r.n_queries for r in rows) == run.n_queries
    for method in run.methods:
        weighted = sum(r.metrics[method]["mrr"] * r.n[method]["mrr"] for r in rows)
        assert weighted / run.n_queries == pytest.approx(run.metrics[method]["mrr"])


def test_deltas_are_elaborate_minus_simple_with_counts() -> None:
    run, _ = _run(_docs())
    assert list(run.deltas) == ["contextual-naive", "late-naive", "late-contextual"]
    assert delta_pairs(["late", "naive"]) == [("naive", "late")]
    delta = run.deltas["late-naive"]["mrr"]
    assert delta is not None and delta.n == 5
    expected = run.metrics["late"]["mrr"] - run.metrics["naive"]["mrr"]  # type: ignore[operator]
    assert delta.delta == pytest.approx(expected)
    assert delta.low <= delta.delta <= delta.high


def test_same_inputs_give_the_same_run_whatever_the_document_order(tmp_path: Path) -> None:
    docs = _docs()
    first, _ = _run(docs)
    second, _ = _run(list(reversed(docs)))
    a, b = first.to_dict(), second.to_dict()
    for volatile in ("created_at", "timings"):
        a.pop(volatile), b.pop(volatile)
    assert a == b
    path = save_run(first, tmp_path / "run.json")
    loaded = load_run(path)
    assert loaded.to_dict() == first.to_dict()
    comparison = compare_runs(first, loaded)
    assert comparison.n_common == 5 and comparison.setup_differences == {}
    assert all(
        d is None or d.delta == 0 for rows in comparison.deltas.values() for d in rows.values()
    )


def test_a_changed_setup_changes_the_run_id_and_shows_in_the_comparison() -> None:
    base, _ = _run(_docs())
    other, _ = _run(_docs(), ks=(1, 2))
    assert base.run_id != other.run_id
    comparison = compare_runs(base, other)
    assert set(comparison.setup_differences) == {"ks"}
    assert json.loads(json.dumps(comparison.to_dict()))["run_a"] == base.run_id


def test_ties_keep_corpus_order() -> None:
    twin = "Identical paragraph about a lighthouse keeper and his logbook."
    docs = [make_document("b-doc", twin), make_document("a-doc", twin)]
    gold = GoldSpan(char_start=0, char_end=len(twin), text=twin)
    queries = [
        LabelledQuery(id=f"q{d}", query="lighthouse logbook", doc=d, gold=(gold,))
        for d in ("a-doc", "b-doc")
    ]
    run = run_eval(
        queries,
        docs,
        EvalConfig(policy=POLICY, methods=("naive",), ks=(1, 2)),
        encoder=FakeEncoder(),
        embed=fake_embed_chunks,
        chunker=lambda doc: paragraph_chunks(doc, POLICY),
    )
    assert run.query("qa-doc").ranks["naive"] == 1 and run.query("qb-doc").ranks["naive"] == 2
    top = run.hits("qa-doc", "naive")
    assert top[0][0].score == top[1][0].score and top[0][1].doc_id == "a-doc"
    assert run.metrics["naive"]["duplicate_rate"] == 0.5  # the twin repeats the first


def test_scope_doc_ranks_only_the_query_document() -> None:
    run, _ = _run(_docs(), scope="doc")
    for record in run.queries:
        for method in run.methods:
            assert {c.doc_id for _, c in run.hits(record.id, method)} == {record.doc_id}
    assert "doc_hit@1" not in run.metrics["naive"]


def test_nothing_resolved_is_a_user_error() -> None:
    from core.errors import LabelError

    docs = _docs()
    with pytest.raises(LabelError, match="no query could be resolved"):
        run_eval(
            _queries(docs)[-1:],
            docs,
            EvalConfig(policy=POLICY, methods=("naive",)),
            encoder=FakeEncoder(),
            embed=fake_embed_chunks,
            chunker=lambda doc: paragraph_chunks(doc, POLICY),
        )


def test_real_chunker_on_a_shared_corpus_with_the_fake_encoder() -> None:
    from core.formats import load_document

    doc = load_document(TEXT_CORPORA / "state_of_the_union.md")
    queries = [q for q in import_chunking_eval(EVAL_DIR) if q.doc == "state_of_the_union"][:20]
    run = run_eval(
        queries,
        [doc],
        EvalConfig(policy=POLICY, methods=("naive", "late"), ks=(1, 5, 10)),
        encoder=FakeEncoder(),
        embed=fake_embed_chunks,
    )
    assert run.n_queries == 20 and not run.unresolved
    for name, value in run.metrics["naive"].items():
        assert value is None or 0.0 <= value <= 1.0, name
    assert run.metrics["naive"]["span_validity"] == 1.0
    assert run.metrics["naive"]["hit@10"] >= run.metrics["naive"]["hit@1"]  # type: ignore[operator]
    for _, citation in run.hits(run.queries[0].id, "late"):
        assert doc.text[citation.char_start : citation.char_end] == citation.quote


def small_real_corpus(chars: int = 8_000) -> tuple[Document, list[LabelledQuery]]:
    """The first ``chars`` characters of chatlogs.md and the shared queries whose gold
    lies inside them (the prefix keeps every offset)."""
    from dataclasses import replace

    text = (TEXT_CORPORA / "chatlogs.md").read_text("utf-8")[:chars]
    doc = make_document("chatlogs", text, source="chatlogs.md")
    queries = [
        replace(q, doc_sha256=None)
        for q in import_chunking_eval(EVAL_DIR)
        if q.doc == "chatlogs" and all(g.char_end <= chars for g in q.gold)
    ]
    return doc, queries


@pytest.mark.slow
def test_real_model_run_is_deterministic() -> None:
    from core.embed import load_encoder
    from core.methods.embedding import embed_chunks

    doc, queries = small_real_corpus()
    assert len(queries) >= 5
    encoder = load_encoder()
    config = EvalConfig(policy=POLICY, methods=("naive", "late"), ks=(1, 5))
    runs = [run_eval(queries, [doc], config, encoder=encoder, embed=embed_chunks) for _ in range(2)]
    assert runs[0].run_id == runs[1].run_id
    assert runs[0].metrics == runs[1].metrics
    assert [q.ranks for q in runs[0].queries] == [q.ranks for q in runs[1].queries]
    assert runs[0].metrics["naive"]["hit@5"] > 0.3  # MiniLM finds most chatlog answers


def test_code_version_is_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.evaluate import run_file as runs

    calls = []
    real = runs.subprocess.run

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(runs.subprocess, "run", counted)
    runs.code_version.cache_clear()
    try:
        first = runs.code_version()
        assert runs.code_version() == first
    finally:
        runs.code_version.cache_clear()
    assert len(calls) <= 1  # one git call at most (none outside a checkout)


def test_code_version_works_outside_git(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.evaluate import run_file as runs

    def no_git(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("git")

    monkeypatch.setattr(runs.subprocess, "run", no_git)
    runs.code_version.cache_clear()  # read once per process: read again without git
    try:
        version = runs.code_version()
    finally:
        runs.code_version.cache_clear()
    assert "+git." not in version and version.endswith(f"+src.{runs.source_digest()}")
