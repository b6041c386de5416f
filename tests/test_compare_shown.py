"""Compare reads what it shows: each method ranked ``depth`` deep, only its top ``k`` read
as records, rank changes worked out for the chunks shown, the rerank stage reading only
the candidates that can reach its top. What is shown must equal what the old path (every
method's top ``depth`` read, then cut to ``k``) showed, and what Evaluate ranks in memory."""

from __future__ import annotations

import pytest
from fakes import (
    FakeEncoder,
    index_by_paragraphs,
    make_document,
)
from test_diagnose_depth import TOPICS as PUMP_TOPICS

from core.provenance.types import ChunkPolicy
from core.retrieve import ranking
from core.retrieve.comparison import compare, hit_of, hits_at, with_changes
from core.retrieve.rerank import RerankWeights, rerank, rerank_top
from core.store import ChunkStore

POLICY = ChunkPolicy(name="fixed", size=300)
TOPICS = [*PUMP_TOPICS, "The valve closes at four bar and opens again at two bar."]
METHODS = ("naive", "late", "bm25", "hybrid(late,bm25;rrf60)")
DEPTH, K = 40, 5


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    store = ChunkStore.open(tmp_path_factory.mktemp("shown") / "store")
    enc = FakeEncoder()
    docs = []
    for i in range(9):
        paras = TOPICS[i % 6 :] + TOPICS[: i % 6]
        # every third document repeats one paragraph word for word: duplicates to rerank
        body = [p if i % 3 else TOPICS[3] for p in paras]
        docs.append(make_document(f"d{i}", "\n\n".join(f"Unit {i % 4}: {t}" for t in body)))
    index_by_paragraphs(docs, policy=POLICY, encoder=enc, store=store)
    return store, enc, {d.doc_id: d for d in docs}


def _old_view(old, k: int, extra: list[str]):
    """The old page's cut: the top ``k`` of a comparison asked ``k = depth``, the rank
    changes of the chunks in any top ``k`` or in ``extra``."""
    results = {m: hits[:k] for m, hits in old.results.items()}
    shown = {h.chunk_id for hits in results.values() for h in hits} | set(extra)
    return results, [c for c in old.rank_changes if c.chunk_id in shown]


@pytest.mark.parametrize("exact_limit", [ranking.EXACT_LIMIT, 5])  # 5: the ANN path
@pytest.mark.parametrize("doc_id", [None, "d4"])
def test_what_compare_shows_equals_the_old_deep_read(filled, monkeypatch, exact_limit, doc_id):
    store, enc, _ = filled
    monkeypatch.setattr(ranking, "EXACT_LIMIT", exact_limit)
    for query in ("filter replaced after hours", "valve pressure bar", "warranty"):
        ask = dict(methods=METHODS, encoder=enc, store=store, policy=POLICY, doc_id=doc_id)
        old = compare(query, k=DEPTH, **ask)
        new = compare(query, k=K, depth=DEPTH, **ask)
        extra = [h.chunk_id for h in old.results["late"][K + 2 : K + 5]]
        results, changes = _old_view(old, K, extra)
        assert new.results == results, query
        assert with_changes(new, extra).rank_changes == changes, query
        for m in METHODS:
            assert list(new.curves[m]) == [h.score for h in old.results[m]], (query, m)
            last = len(old.results[m])
            assert hits_at(new, m, [last, 2]) == [old.results[m][last - 1], old.results[m][1]]
        deep = old.results["naive"][-1]
        assert hit_of(new, "naive", deep.chunk_id) == deep


WEIGHTS = [
    RerankWeights(),
    RerankWeights(score=1.0, citation=0.3, heading=-0.2, duplicate=-0.5),
    RerankWeights(score=-0.5, citation=0.1, heading=0.0, duplicate=0.4),  # low scores win
    RerankWeights(score=0.2, citation=1.0, heading=1.0, duplicate=-1.0),  # features dominate
]


@pytest.mark.parametrize("method", ["late", "bm25", "hybrid(late,bm25;rrf60)"])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_the_rerank_top_equals_the_top_of_a_rerank_of_every_candidate(filled, method, weights):
    store, enc, docs = filled
    loaded = {d: docs[d] for d in list(docs)[:5]}  # some citations verify, some cannot
    cands = compare(
        "valve pressure bar", methods=[method], encoder=enc, store=store, policy=POLICY, k=DEPTH
    ).results[method]
    full = rerank(cands, docs=loaded, weights=weights, method=method)
    for k in (1, 3, 8):
        read: list[int] = []

        def fetch(ranks: list[int], read: list[int] = read) -> list:
            read.extend(ranks)
            return [cands[r - 1] for r in ranks]

        top = rerank_top(
            [h.score for h in cands], fetch, k=k, method=method, docs=loaded, weights=weights
        )
        assert len(top.chunks) >= k and top.n_candidates == len(cands)
        assert top.chunks == full.chunks[: len(top.chunks)], (k, weights)
        assert len(read) <= len(cands)


def test_the_default_rerank_reads_a_few_of_many_candidates(filled):
    store, enc, docs = filled
    cands = compare(
        "valve pressure bar", methods=["late"], encoder=enc, store=store, policy=POLICY, k=DEPTH
    ).results["late"]
    read: list[int] = []
    rerank_top(
        [h.score for h in cands], lambda ranks: read.extend(ranks) or [cands[r - 1] for r in ranks],
        k=2, method="late", docs=docs,
    )  # fmt: skip
    assert 2 <= len(read) < len(cands)
