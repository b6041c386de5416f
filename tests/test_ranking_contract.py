"""One ranking contract: Compare ranks through the store, Evaluate in memory; below the
store's exact limit the two give one query the same chunks in the same order with the
same scores, under every method (dense, lexical, fused), over the whole index and over
one document. Beyond the exact limit Compare's dense ranks come from the approximate
index (``core.retrieve.ranking``), and only there may they differ."""

from __future__ import annotations

import pytest
from fakes import FakeEncoder, fake_embed_chunks

from core import methods as registry
from core.chunk import default_policy
from core.evaluate import EvalConfig, LabelledQuery, run_eval
from core.evaluate.labels import GoldSpan
from core.formats import load_document
from core.index.indexer import default_steps, index_documents
from core.retrieve.comparison import compare
from core.retrieve.ranking import EXACT_LIMIT
from core.store import ChunkStore
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


@pytest.mark.parametrize("depth", [None, 5000])  # the top k alone, and as the page asks it
@pytest.mark.parametrize("scope", ["corpus", "doc"])
def test_compare_and_evaluate_rank_a_query_alike(indexed, scope: str, depth: int | None) -> None:
    docs, policy, store, encoder = indexed
    methods = (*registry.base_methods(), "hybrid(late,bm25;rrf60)")
    target = docs[1]
    labels = [
        LabelledQuery(id=f"q{i}", query=q, doc=target.doc_id,
                      gold=(GoldSpan(char_start=0, char_end=20),))
        for i, q in enumerate(QUERIES)
    ]  # fmt: skip
    run = run_eval(
        labels, docs, EvalConfig(policy=policy, methods=methods, ks=(1, 5, 10), scope=scope),
        encoder=encoder, embed=fake_embed_chunks,
    )  # fmt: skip
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


def test_a_fused_tie_keeps_chunk_order_in_compare_as_in_evaluate() -> None:
    """Two chunks with swapped ranks under two methods tie exactly under reciprocal rank
    fusion; both engines then keep chunk order (not the chunk ids' hash order)."""
    import numpy as np

    from core.evaluate.scoring import rank_rows
    from core.methods.fusion import fuse_matrices
    from core.retrieve.ranking import Ranking, _fused

    ids = ["cz", "ca", "cm"]  # chunk order; the ids sort the other way round
    keys = {c: ("doc", i, 10 * i) for i, c in enumerate(ids)}
    a = np.array([[0.9, 0.5, 0.1]])  # ranks cz 1, ca 2, cm 3
    b = np.array([[0.5, 0.9, 0.1]])  # ranks ca 1, cz 2, cm 3: cz and ca tie when fused

    def part(name: str, scores: np.ndarray) -> Ranking:
        order = np.argsort(-scores[0], kind="stable")
        ranked = [(ids[i], r, float(scores[0, i])) for r, i in enumerate(order, start=1)]
        return Ranking(name, ranked, len(ids), True, lambda p: [], lambda x: {},
                       order_of=lambda want: {c: keys[c] for c in want})  # fmt: skip

    spec = registry.get("hybrid(late,bm25;rrf60)")
    in_store = [cid for cid, _, _ in _fused(spec, [part("late", a), part("bm25", b)], 3).ranked]
    in_memory = [ids[i] for i in rank_rows(fuse_matrices(spec, [a, b]), None, 3)[0]]
    assert in_store == in_memory == ["cz", "ca", "cm"]
