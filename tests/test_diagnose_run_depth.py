"""Full-depth ranks of any chunk for a query of a saved run (``core.diagnose.run_depth``)
agree with what the run itself recorded: the best gold chunk's rank is ``full_ranks``,
the run's top hits stand at their ranks, in both scopes, for dense, lexical and fused
methods."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks
from test_demo_datasheets import DATASHEETS, load_generator

from core.chunk import chunk_document
from core.diagnose.run_depth import RunRanker
from core.evaluate import EvalConfig, Evidence, LabelledQuery, run_eval
from core.formats import load_document, parse_document
from core.provenance.types import ChunkPolicy

FIXED_300 = ChunkPolicy(name="fixed", size=300)
METHODS = ("naive", "late", "bm25", "hybrid(late,bm25;rrf60)")


def chunker(doc):
    return chunk_document(doc, parse_document(doc).blocks, FIXED_300)


@pytest.fixture(scope="module", params=["corpus", "doc"])
def demo_run(request):
    gen = load_generator()
    docs = [load_document(DATASHEETS / f"datasheet-{gen.slug(p)}.pdf") for p in gen.PRODUCTS]
    queries = [
        LabelledQuery(
            id=f"{gen.slug(product)}-{gen.slug(section)}", query=f"{product} {asked}",
            doc=f"datasheet-{gen.slug(product)}", evidence=(Evidence(text=texts[section]),),
        )
        for product, texts in gen.PRODUCTS.items()
        for section, asked in gen.SECTION_QUERIES.items()
    ]  # fmt: skip
    config = EvalConfig(policy=FIXED_300, methods=METHODS, ks=(1, 5), scope=request.param)
    enc = FakeEncoder()
    run = run_eval(queries, docs, config, encoder=enc, embed=fake_embed_chunks, chunker=chunker)
    by_id = {d.doc_id: d for d in docs}
    ranker = RunRanker(run, by_id, encoder=enc, chunker=chunker, embed=fake_embed_chunks)
    return run, ranker


def test_the_best_gold_chunk_ranks_where_the_run_recorded_it(demo_run):
    run, ranker = demo_run
    for record in run.queries:
        gold = [
            c.chunk_id for c in ranker.chunks_of(record.doc_id)
            if any(c.char_start < g.char_end and g.char_start < c.char_end for g in record.gold)
        ]  # fmt: skip
        found = [ranker.full_depth(record.query, record.doc_id, c) for c in gold]
        for method in run.methods:
            best = min(f[method].rank for f in found)
            assert best == record.full_ranks[method], (record.id, method)
            assert {f[method].scope_size for f in found} == {record.scope_size}


def test_the_runs_top_hits_stand_at_their_ranks_with_their_scores(demo_run):
    run, ranker = demo_run
    for record in run.queries[:8]:
        for method in run.methods:
            for hit in record.top[method][:5]:
                got = ranker.full_depth(record.query, record.doc_id, hit.chunk_id, k=5)[method]
                assert got.rank == hit.rank and np.isclose(got.score, hit.score, atol=1e-6)
                assert got.top_score == pytest.approx(record.top[method][0].score, abs=1e-6)
                assert got.kth_score == pytest.approx(record.top[method][4].score, abs=1e-6)
                assert got.to_enter == 0.0


def test_a_chunk_outside_the_scope_has_no_rank_and_missing_documents_are_refused(demo_run):
    run, ranker = demo_run
    record = run.queries[0]
    other = next(d for d in run.corpus if d != record.doc_id)
    chunk = ranker.chunks_of(other)[0].chunk_id
    got = ranker.full_depth(record.query, record.doc_id, chunk)
    for found in got.values():
        assert (found.rank is None) == (run.scope == "doc")
    with pytest.raises(ValueError, match="needs these documents"):
        RunRanker(run, {}, encoder=FakeEncoder(), chunker=chunker)
