"""Full-depth ranks: any chunk's exact rank under every method equals a brute-force
ranking over all vectors (dense), all BM25 scores (lexical) and fused full rankings."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import (
    FakeEncoder,
    index_by_paragraphs,
    make_document,
)

from core.diagnose.depth import full_depth_ranks
from core.provenance.types import ChunkPolicy
from core.retrieve import ranking
from core.retrieve.ranking import Scope, StoreRanker, rank_in_memory
from core.store import ChunkStore

POLICY = ChunkPolicy(name="fixed", size=300)
TOPICS = [
    "The compressor starts when the pressure falls below two bar.",
    "Its filter must be replaced every six months or after 500 hours.",
    "Noise stays under 60 dB at one metre in normal operation.",
    "The warranty covers parts and labour for three years.",
    "Cleaning the intake grille monthly keeps the airflow steady.",
]
METHODS = ("naive", "late", "bm25", "hybrid(late,bm25;rrf60)", "hybrid(naive,bm25;w0.5,0.5)")


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    store = ChunkStore.open(tmp_path_factory.mktemp("depth") / "store")
    enc = FakeEncoder()
    docs = [
        make_document(
            f"d{i}", "\n\n".join(f"Unit {i}: {t}" for t in TOPICS[i % 5 :] + TOPICS[: i % 5])
        )
        for i in range(8)
    ]
    index_by_paragraphs(docs, policy=POLICY, encoder=enc, store=store)
    return store, enc


@pytest.mark.parametrize("doc_id", [None, "d3"])
def test_full_depth_ranks_equal_the_exact_full_ranking(filled, doc_id):
    store, enc = filled
    query = "filter replaced after hours"
    scope = Scope(store=store, model=enc.name, policy=POLICY, doc_id=doc_id)
    size = scope.size("naive")
    recs = store.scope_records(model=enc.name, method="naive", policy=POLICY, doc_id=doc_id)
    brute = {c: r for c, r, _ in rank_in_memory(enc.encode_query(query), recs.matrix, recs.ids)}
    for method in METHODS:
        engine = StoreRanker(scope, query=query, qvec=enc.encode_query(query)).rank(method, size)
        for cid in recs.ids[:: max(1, len(recs.ids) // 12)]:
            found = full_depth_ranks(
                query, cid, methods=[method], encoder=enc, store=store, policy=POLICY,
                doc_id=doc_id, k=5,
            )[method]  # fmt: skip
            assert found.rank == engine.lookup(cid)[0], (method, cid)
            assert found.score == pytest.approx(engine.lookup(cid)[1], abs=1e-5)
            assert found.scope_size == size
            if method == "naive":
                assert found.rank == brute[cid]


def test_a_deep_chunk_reports_the_gap_to_enter_the_top_k(filled, monkeypatch):
    store, enc = filled
    monkeypatch.setattr(ranking, "EXACT_LIMIT", 5)  # compare() would stop at ANN depth
    query = "warranty labour three years"
    recs = store.scope_records(model=enc.name, method="naive", policy=POLICY)
    ranked = rank_in_memory(enc.encode_query(query), recs.matrix, recs.ids)
    last_id, last_rank, last_score = ranked[-1]
    found = full_depth_ranks(
        query, last_id, methods=["naive"], encoder=enc, store=store, policy=POLICY, k=10
    )["naive"]
    assert (found.rank, found.scope_size) == (last_rank, len(ranked)) == (40, 40)
    assert found.top_score == pytest.approx(ranked[0][2], abs=1e-5)
    assert found.kth_score == pytest.approx(ranked[9][2], abs=1e-5)
    assert (
        found.to_enter == pytest.approx(ranked[9][2] - last_score, abs=1e-5) and found.to_enter > 0
    )
    inside = full_depth_ranks(
        query, ranked[0][0], methods=["naive"], encoder=enc, store=store, policy=POLICY
    )
    assert inside["naive"].rank == 1 and inside["naive"].to_enter == 0.0
    missing = full_depth_ranks(
        query, "nope", methods=["naive"], encoder=enc, store=store, policy=POLICY
    )
    assert missing["naive"].rank is None and np.isfinite(missing["naive"].top_score)
