"""The second stage: features, contributions and ranks of ``core.retrieve.rerank`` are exact and
explainable, and its near-duplicate rule is the evaluation's own."""

from __future__ import annotations

import hashlib

import pytest
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from core.evaluate.metrics import duplicate_flags
from core.provenance.types import ChunkPolicy
from core.retrieve.comparison import compare
from core.retrieve.rerank import (
    FEATURES,
    UNVERIFIED,
    RerankWeights,
    citation_readiness,
    contribution_rows,
    near_duplicates,
    rerank,
)
from core.store import ChunkStore
from core.store.chroma_records import StoredHit

TEXT = "Alpha pumps water.\n\nBeta keeps it warm.\n\nGamma stops the noise.\n\nDelta holds."
DOC = make_document("manual", TEXT, title="Manual")


def hit(
    rank: int,
    cosine: float,
    start: int,
    end: int,
    *,
    doc=DOC,
    heading: tuple[str, ...] = ("Manual",),
    text: str | None = None,
) -> StoredHit:
    """A stored hit of ``doc.text[start:end]`` (or of ``text``, for spans of other docs)."""
    quote = doc.text[start:end] if text is None else text
    return StoredHit(
        chunk_id=f"c{rank}-{start}-{end}", rank=rank, score=cosine, method="late", model="m",
        policy_key="p", doc_id=doc.doc_id, doc_sha256=doc.sha256, doc_source=doc.source,
        doc_title=doc.title, char_start=start, char_end=end, pages=(), heading_path=heading,
        block_kinds=("paragraph",), text=quote, chunk_index=rank, token_count=3,
        truncated_tokens=0, windows=(0,), context="full", full_context_tokens=3, oversize=False,
    )  # fmt: skip


def test_citation_readiness_verifies_against_the_loaded_document():
    good = hit(1, 0.5, 0, 18)
    assert citation_readiness(good, {DOC.doc_id: DOC}) == (1.0, "ok")
    assert citation_readiness(good, {}) == (0.5, UNVERIFIED)
    changed = make_document("manual", TEXT + " More.", title="Manual")
    assert citation_readiness(good, {DOC.doc_id: changed}) == (0.0, "stale")
    wrong = hit(1, 0.5, 0, 18, text="Alpha pumps steam.")
    assert citation_readiness(wrong, {DOC.doc_id: DOC}) == (0.0, "mismatch")
    empty = hit(1, 0.5, 5, 5)
    assert citation_readiness(empty, {DOC.doc_id: DOC})[0] == 0.0


def test_contributions_add_up_and_ranks_are_a_permutation():
    hits = [hit(1, 0.61, 0, 18), hit(2, 0.60, 20, 39, heading=()), hit(3, 0.55, 41, 63)]
    result = rerank(hits, docs={DOC.doc_id: DOC}, method="late")
    assert sorted(c.rank for c in result.chunks) == [1, 2, 3]
    for chunk in result.chunks:
        assert set(chunk.contributions) == set(FEATURES) == set(chunk.features)
        assert chunk.score == pytest.approx(sum(chunk.contributions.values()))
        weights = RerankWeights().as_dict()
        for name in FEATURES:
            assert chunk.contributions[name] == pytest.approx(weights[name] * chunk.features[name])
    scores = [c.score for c in result.chunks]
    assert scores == sorted(scores, reverse=True)


def test_only_the_score_keeps_the_first_stage_order():
    hits = [hit(i + 1, 0.9 - 0.1 * i, 0, 18, heading=() if i % 2 else ("H",)) for i in range(4)]
    weights = RerankWeights(score=1.0, citation=0.0, heading=0.0, duplicate=0.0)
    result = rerank(hits, weights=weights)
    assert [c.first_rank for c in result.chunks] == [1, 2, 3, 4]
    assert all(c.rank_change == 0 for c in result.chunks) and result.moved() == []


def test_a_heading_path_lifts_a_close_second_and_the_change_is_logged():
    hits = [hit(1, 0.600, 0, 18, heading=()), hit(2, 0.595, 20, 39)]
    result = rerank(hits, docs={DOC.doc_id: DOC})
    first, second = result.chunks
    assert first.first_rank == 2 and first.rank == 1 and first.rank_change == -1
    assert second.rank_change == 1
    assert first.contributions["heading"] == pytest.approx(RerankWeights().heading)
    assert [c.chunk_id for c in result.moved()] == [first.chunk_id, second.chunk_id]
    assert result.ranks() == {first.chunk_id: 1, second.chunk_id: 2}


def test_a_near_duplicate_of_a_higher_chunk_is_pushed_down():
    overlapping = hit(2, 0.70, 4, 18)  # inside chunk 1: more than half its characters
    other = hit(3, 0.65, 41, 63)
    result = rerank([hit(1, 0.71, 0, 18), overlapping, other], docs={DOC.doc_id: DOC})
    by_id = {c.chunk_id: c for c in result.chunks}
    assert by_id[overlapping.chunk_id].duplicate_of == "c1-0-18"
    assert by_id[overlapping.chunk_id].features["duplicate"] == 1.0
    assert by_id[overlapping.chunk_id].rank == 3 and by_id[other.chunk_id].rank == 2
    rows = contribution_rows(result, 2)
    assert [r["chunk_id"] for r in rows] == ["c1-0-18", other.chunk_id]
    assert rows[1]["was"] == 3 and rows[1]["moved"] == 1 and rows[1]["duplicate of"] == ""


spans = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 60),
        st.integers(1, 30),
        st.sampled_from(["a", "b a", "c"]),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(spans)
def test_near_duplicates_agree_with_the_evaluation_rule(rows):
    docs = [make_document(f"d{i}", "x" * 100) for i in range(3)]
    hits = []
    for rank, (d, start, length, words) in enumerate(rows, start=1):
        text = (words + " " * length)[:length]  # whitespace-only tails squash alike
        hits.append(hit(rank, 0.5, start, start + length, doc=docs[d], text=text))
    found = near_duplicates(hits)
    assert [f is not None for f in found] == duplicate_flags(hits)
    position = {h.chunk_id: i for i, h in enumerate(hits)}
    for i, earlier in enumerate(found):
        if earlier is not None:
            assert position[earlier] < i


def test_reranking_a_wide_first_stage_keeps_every_candidate(tmp_path):
    enc, policy = FakeEncoder(), ChunkPolicy(name="fixed", size=300)
    store = ChunkStore.open(tmp_path / "store")
    docs = {}
    for name in ("north", "south"):
        text = "\n\n".join(f"{name} unit part {i}: the valve closes at {i} bar." for i in range(6))
        doc = make_document(name, text, title=name.title())
        chunks = paragraph_chunks(doc, policy)
        vectors = fake_embed_chunks(doc, chunks, "late", enc)
        store.upsert_document(doc, chunks, vectors, model=enc.name, method="late", policy=policy)
        docs[doc.doc_id] = doc
    wide = compare("north valve", methods=["late"], encoder=enc, store=store, policy=policy, k=50)
    result = rerank(wide.results["late"], docs=docs, method="late")
    assert result.n_candidates == len(wide.results["late"]) == 12
    assert {c.chunk_id for c in result.chunks} == {h.chunk_id for h in wide.results["late"]}
    assert all(c.citation_status == "ok" for c in result.chunks)
    digest = hashlib.sha256(repr([c.chunk_id for c in result.chunks]).encode()).hexdigest()
    again = rerank(wide.results["late"], docs=docs, method="late")
    assert digest == hashlib.sha256(repr([c.chunk_id for c in again.chunks]).encode()).hexdigest()


def test_an_unbounded_first_stage_score_is_scaled_before_it_is_weighted():
    from dataclasses import replace

    from core.retrieve.rerank import first_stage_scores

    hits = [replace(hit(r, s, 0, 10), method="bm25") for r, s in ((1, 12.0), (2, 6.0), (3, 2.0))]
    assert first_stage_scores(hits) == [1.0, 0.4, 0.0]
    cosine = [hit(1, 0.8, 0, 10), hit(2, 0.3, 0, 10)]  # late: kept as it is
    assert first_stage_scores(cosine) == [0.8, 0.3]
