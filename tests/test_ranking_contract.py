"""One ranking contract (``core.retrieve.ranking``): one ``Ranker`` interface, a store
backend (Compare, the full-depth panel) and an in-memory one (Evaluate, a saved run's
ranks), sharing how scores become ranks and how a fusion is made.

- Below the store's exact limit the two give one query the same chunks in the same order
  with the same scores, under every method (dense, lexical, fused), over the whole index
  and over one document; given the same scores they give every chunk the same full rank,
  ties included (equal scores keep chunk order).
- Beyond it only the store's dense ranks change: they come from the approximate index to
  ``ANN_DEPTH``, a chunk past that depth has a score but no rank, and a fusion fuses the
  dense part's top only; lexical ranks stay exact and equal Evaluate's."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks, index_by_paragraphs, make_document

from core import methods as registry
from core.chunk import default_policy
from core.evaluate import EvalConfig, LabelledQuery, run_eval
from core.evaluate.labels import GoldSpan
from core.formats import load_document
from core.index.indexer import default_steps, index_documents
from core.methods.fusion import fuse_ranked
from core.provenance.types import ChunkPolicy
from core.retrieve import ranking
from core.retrieve.comparison import compare, hit_of
from core.retrieve.ranking import (
    EXACT_LIMIT,
    MemoryRanker,
    Ranker,
    Ranking,
    Scope,
    StoreRanker,
    cosines,
    fuse_rankings,
    rank_scores,
)  # fmt: skip
from core.store import ChunkStore
from core.store.lexical_index import lexical_collection
from tests.conftest import SAMPLE_DOCS

QUERIES = ("operating temperature of the pump", "battery life and charging", "warranty")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    docs = [load_document(p) for p in sorted((SAMPLE_DOCS / "datasheets").glob("*.pdf"))]
    policy = default_policy("structure")
    store = ChunkStore.open(tmp_path_factory.mktemp("store"))
    encoder = FakeEncoder()
    methods = registry.base_methods()
    report = index_documents(docs, policy=policy, methods=methods, encoder=encoder,
                             store=store, steps=default_steps(fake_embed_chunks))  # fmt: skip
    assert not any(d.error for d in report.documents)
    return docs, policy, store, encoder


def _evaluate(indexed, methods, scope: str):
    """The evaluation of ``QUERIES`` on the second datasheet: its labels and its run."""
    docs, policy, _, encoder = indexed
    target = docs[1]
    labels = [
        LabelledQuery(id=f"q{i}", query=q, doc=target.doc_id,
                      gold=(GoldSpan(char_start=0, char_end=20),))
        for i, q in enumerate(QUERIES)
    ]  # fmt: skip
    config = EvalConfig(policy=policy, methods=methods, ks=(1, 5, 10), scope=scope)
    return labels, run_eval(labels, docs, config, encoder=encoder, embed=fake_embed_chunks)


@pytest.mark.parametrize("depth", [None, 5000])  # the top k alone, and as the page asks it
@pytest.mark.parametrize("scope", ["corpus", "doc"])
def test_compare_and_evaluate_rank_a_query_alike(indexed, scope: str, depth: int | None) -> None:
    docs, policy, store, encoder = indexed
    methods = (*registry.base_methods(), "hybrid(late,bm25;rrf60)")
    target = docs[1]
    labels, run = _evaluate(indexed, methods, scope)
    for label in labels:
        shown = compare(
            label.query, methods=methods, encoder=encoder, store=store, policy=policy, k=10,
            depth=depth, doc_id=target.doc_id if scope == "doc" else None,
        )  # fmt: skip
        assert shown.exact and max(shown.scope_sizes.values()) < EXACT_LIMIT
        record = run.query(label.id)
        for method in methods:
            ours = [(h.chunk_id, round(h.score, 4)) for h in record.top[method]]
            theirs = [(h.chunk_id, round(h.score, 4)) for h in shown.results[method]]
            assert theirs == ours, (label.query, method)


def test_beyond_the_exact_limit_only_the_dense_ranks_change(indexed, monkeypatch) -> None:
    """With the limit and the approximate depth lowered to a few chunks, Compare's dense
    ranks stop at that depth (a chunk past it keeps its score, rank 0 when asked), its
    fusion is no longer exact, and its lexical ranks still equal Evaluate's."""
    _, policy, store, encoder = indexed
    methods = ("naive", "bm25", "hybrid(naive,bm25;rrf60)")
    labels, run = _evaluate(indexed, methods, "corpus")
    scope_ids = store.scope_records(model=encoder.name, method="naive", policy=policy).ids
    monkeypatch.setattr(ranking, "EXACT_LIMIT", 5)
    monkeypatch.setattr(ranking, "ANN_DEPTH", 8)
    for label in labels:
        shown = compare(label.query, methods=methods, encoder=encoder, store=store,
                        policy=policy, k=5)  # fmt: skip
        assert shown.scope_sizes["naive"] > 8 and not shown.exact
        dense = shown.rankings["naive"]
        assert len(dense.ranked) == 8 and not dense.exact
        past = next(c for c in scope_ids if dense.lookup(c) is None)  # more than 8 in scope
        hit = hit_of(shown, "naive", past)
        assert hit is not None and hit.rank == 0
        assert shown.rankings["bm25"].exact
        ours = [(h.chunk_id, round(h.score, 4)) for h in run.query(label.id).top["bm25"][:5]]
        assert [(h.chunk_id, round(h.score, 4)) for h in shown.results["bm25"]] == ours
        assert not shown.rankings["hybrid(naive,bm25;rrf60)"].exact


# -- the two backends on the same scores, ties included ----------------------------------

POLICY = ChunkPolicy(name="fixed", size=300)
PARAGRAPHS = [
    "The compressor starts when the pressure falls below two bar.",
    "Its filter must be replaced every six months or after 500 hours.",
    "The warranty covers parts and labour for three years.",
    "Cleaning the intake grille monthly keeps the airflow steady.",
]
TIED = ("naive", "bm25", "hybrid(naive,bm25;rrf60)", "hybrid(naive,bm25;w0.7,0.3)")


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    """Four documents made of the same paragraphs in turned orders: every paragraph's
    chunk has the same text, vector and BM25 score in each, so every score ties four ways."""
    store = ChunkStore.open(tmp_path_factory.mktemp("tied") / "store")
    encoder = FakeEncoder()
    docs = [make_document(f"d{i}", "\n\n".join(PARAGRAPHS[i:] + PARAGRAPHS[:i])) for i in range(4)]
    # indexed last document first: the store's own order is not chunk order
    index_by_paragraphs(docs[::-1], policy=POLICY, encoder=encoder, store=store,
                        methods=("naive", "bm25"))  # fmt: skip
    return store, encoder


def _memory_backend(store, encoder, query: str, doc_id: str | None) -> MemoryRanker:
    """The in-memory backend over the store's own scores, in chunk order."""
    recs = store.scope_records(model=encoder.name, method="naive", policy=POLICY, doc_id=doc_id)
    key = {c: (m["doc_id"], m["chunk_index"], m["char_start"])
           for c, m in zip(recs.ids, recs.metadatas, strict=True)}  # fmt: skip
    order = sorted(range(len(recs.ids)), key=lambda i: key[recs.ids[i]])
    ids = [recs.ids[i] for i in order]
    dense = cosines(encoder.encode_query(query), recs.matrix[order])
    col = lexical_collection(store, model=encoder.name, method="bm25", policy=POLICY)
    lexical = col.index.scores(query)
    scores = {"naive": dense, "bm25": np.asarray([lexical[col.row_of[c]] for c in ids])}
    return MemoryRanker(ids, scores.__getitem__)


@pytest.mark.parametrize("doc_id", [None, "d2"])
@pytest.mark.parametrize("query", ["filter replaced", "warranty labour", "pressure bar airflow"])
def test_both_backends_give_every_chunk_the_same_rank_ties_included(repeated, query, doc_id):
    store, encoder = repeated
    scope = Scope(store=store, model=encoder.name, policy=POLICY, doc_id=doc_id)
    backends: list[Ranker] = [
        StoreRanker(scope, query=query, qvec=encoder.encode_query(query)),
        _memory_backend(store, encoder, query, doc_id),
    ]
    for method in TIED:
        size = backends[0].size(method)
        assert backends[1].size(method) == size
        store_ranking, memory_ranking = (b.rank(method, size) for b in backends)
        ranks = {s for _, _, s in store_ranking.ranked}
        if doc_id is None and method in ("naive", "bm25"):
            assert len(ranks) < size  # the scope does hold ties
        assert [c for c, _, _ in store_ranking.ranked] == [c for c, _, _ in memory_ranking.ranked]
        for cid, rank, score in memory_ranking.ranked:
            found = store_ranking.lookup(cid)
            assert found is not None and found[0] == rank, (method, cid)
            assert found[1] == pytest.approx(score, abs=1e-6)
        top = backends[0].rank(method, 3)  # a shallow ranking is the deep one's head
        assert [c for c, _, _ in top.ranked[:3]] == [c for c, _, _ in store_ranking.ranked[:3]]


def test_a_fused_tie_keeps_chunk_order_in_both_backends() -> None:
    """Two chunks with swapped ranks under two methods tie exactly under reciprocal rank
    fusion; both ways of fusing then keep chunk order (not the chunk ids' hash order): the
    store's (parts over their own ids, ordered by their records' keys) and memory's
    (parts over the same ids, fused as vectors)."""
    ids = ["cz", "ca", "cm"]  # chunk order; the ids sort the other way round
    keys = {c: ("doc", i, 10 * i) for i, c in enumerate(ids)}
    a = np.array([0.9, 0.5, 0.1])  # ranks cz 1, ca 2, cm 3
    b = np.array([0.5, 0.9, 0.1])  # ranks ca 1, cz 2, cm 3: cz and ca tie when fused
    spec = registry.get("hybrid(late,bm25;rrf60)")

    def stored(name: str, scores: np.ndarray) -> Ranking:  # own ids, keys from records
        return rank_scores(name, list(ids), scores, 3,
                           order_of=lambda want: {c: keys[c] for c in want})  # fmt: skip

    in_store = fuse_rankings(spec, [stored("late", a), stored("bm25", b)], 3)
    in_memory = MemoryRanker(ids, {"late": a, "bm25": b}.__getitem__).rank(spec.name, 3)
    assert in_store.full is None and in_memory.full is not None  # the two ways were taken
    assert [c for c, _, _ in in_store.ranked] == [c for c, _, _ in in_memory.ranked]
    assert [c for c, _, _ in in_store.ranked] == ["cz", "ca", "cm"]
    table = [{c: (r, s) for c, r, s in p.ranked} for p in (stored("late", a), stored("bm25", b))]
    assert [s for _, _, s in in_memory.ranked] == sorted(fuse_ranked(spec, table).values())[::-1]
