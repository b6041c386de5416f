"""Side-by-side retrieval: exact in-memory ranks, rank changes, scopes, the JSON contract."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import StoreError
from core.provenance.types import ChunkPolicy
from core.retrieve import ranking
from core.retrieve.comparison import compare, comparison_to_dict, rank_in_memory
from core.store import ChunkStore

POLICY = ChunkPolicy(name="fixed", size=300)
METHODS = ("naive", "late", "contextual")
TOPICS = [
    "The compressor starts when the pressure falls below two bar.",
    "Its filter must be replaced every six months or after 500 hours.",
    "Noise stays under 60 dB at one metre in normal operation.",
    "The warranty covers parts and labour for three years.",
    "Cleaning the intake grille monthly keeps the airflow steady.",
    "An overheating sensor cuts power above 90 degrees Celsius.",
]


def doc_text(name: str) -> str:
    return "\n\n".join(f"{name}: {t}" for t in TOPICS)


@pytest.fixture()
def enc():
    return FakeEncoder()


@pytest.fixture()
def filled(tmp_path, enc):
    store = ChunkStore.open(tmp_path / "store")
    vectors = {}
    for doc_id in ("alpha", "beta", "gamma"):
        doc = make_document(doc_id, doc_text(doc_id.capitalize()), title=doc_id.upper())
        chunks = paragraph_chunks(doc, POLICY)
        for method in METHODS:
            vecs = fake_embed_chunks(doc, chunks, method, enc)
            store.upsert_document(doc, chunks, vecs, model=enc.name, method=method, policy=POLICY)
            vectors.setdefault(method, []).extend(
                (c.chunk_id, v.vector) for c, v in zip(chunks, vecs, strict=True)
            )
    return store, vectors


def test_rank_in_memory_matches_brute_force():
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(50, 16)).astype(np.float32)
    query = rng.normal(size=16)
    ids = [f"c{i}" for i in range(50)]
    ranked = rank_in_memory(query, matrix, ids)
    cos = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    assert [r for _, r, _ in ranked] == list(range(1, 51))
    assert [cid for cid, _, _ in ranked] == [ids[i] for i in np.argsort(-cos)]
    assert np.allclose([c for _, _, c in ranked], np.sort(cos)[::-1], atol=1e-6)


def test_rank_in_memory_ties_keep_chunk_order_and_zero_rows_score_zero():
    row = np.array([1.0, 0.0])
    matrix = np.array([[0.0, 0.0], row, 2 * row, [0.0, 1.0], row])
    ranked = rank_in_memory(np.array([3.0, 0.0]), matrix, ["z", "b", "a", "y", "c"])
    assert [cid for cid, _, _ in ranked] == ["b", "a", "c", "z", "y"]
    assert dict((cid, cos) for cid, _, cos in ranked)["z"] == 0.0
    assert rank_in_memory(np.ones(2), np.zeros((0, 2)), []) == []
    with pytest.raises(ValueError):
        rank_in_memory(np.ones(2), matrix, ["a"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=1, max_size=30),
    st.lists(st.integers(-3, 3), min_size=3, max_size=3),
)
def test_rank_in_memory_is_a_sorted_permutation(rows, query):
    matrix = np.array(rows, dtype=np.float32)
    ids = [f"c{i}" for i in range(len(rows))]
    ranked = rank_in_memory(np.array(query, dtype=np.float32), matrix, ids)
    assert sorted(cid for cid, _, _ in ranked) == sorted(ids)
    assert [r for _, r, _ in ranked] == list(range(1, len(rows) + 1))
    cos = [c for _, _, c in ranked]
    assert all(a >= b for a, b in zip(cos, cos[1:], strict=False))
    position = {cid: i for i, cid in enumerate(ids)}
    for (a, _, ca), (b, _, cb) in zip(ranked, ranked[1:], strict=False):
        if ca == cb:
            assert position[a] < position[b]


def test_compare_ranks_are_full_exact_ranks(filled, enc):
    store, vectors = filled
    query = "Beta filter replacement interval"
    cmp = compare(query, methods=METHODS, encoder=enc, store=store, policy=POLICY, k=4)
    assert cmp.exact and cmp.scope_sizes == {m: 18 for m in METHODS}
    qvec = enc.encode_query(query)
    for method in METHODS:
        ids = [cid for cid, _ in vectors[method]]
        expected = rank_in_memory(qvec, np.stack([v for _, v in vectors[method]]), ids)
        full = {cid: (rank, cos) for cid, rank, cos in expected}
        hits = cmp.results[method]
        assert [h.chunk_id for h in hits] == [cid for cid, _, _ in expected[:4]]
        assert [h.rank for h in hits] == [1, 2, 3, 4]
        for change in cmp.rank_changes:
            rank, cos = full[change.chunk_id]
            assert change.ranks[method] == rank
            assert change.scores[method] == pytest.approx(cos, abs=1e-5)
    union = {h.chunk_id for m in METHODS for h in cmp.results[m]}
    assert {c.chunk_id for c in cmp.rank_changes} == union
    for change in cmp.rank_changes:
        assert change.delta == change.ranks["late"] - change.ranks["naive"]
        assert change.deltas["contextual"] == change.ranks["contextual"] - change.ranks["naive"]
    best = [min(c.ranks.values()) for c in cmp.rank_changes]
    assert best == sorted(best)


def test_compare_within_one_document(filled, enc):
    store, _ = filled
    cmp = compare(
        "overheating sensor",
        methods=["naive", "late"],
        encoder=enc,
        store=store,
        policy=POLICY,
        k=3,
        doc_id="gamma",
    )
    assert cmp.scope_sizes == {"naive": 6, "late": 6}
    assert all(h.doc_id == "gamma" for m in cmp.methods for h in cmp.results[m])
    assert cmp.results["naive"][0].text.endswith("90 degrees Celsius.")
    assert all(1 <= r <= 6 for c in cmp.rank_changes for r in c.ranks.values())


def test_query_is_encoded_once(filled, enc):
    store, _ = filled
    before = enc.encoded
    compare("warranty", methods=METHODS, encoder=enc, store=store, policy=POLICY, k=2)
    assert enc.encoded == before + 1


def test_large_scope_falls_back_to_the_store_index(filled, enc, monkeypatch):
    store, vectors = filled
    monkeypatch.setattr(ranking, "EXACT_LIMIT", 5)
    monkeypatch.setattr(ranking, "ANN_DEPTH", 6)
    cmp = compare(
        "noise level", methods=["naive", "late"], encoder=enc, store=store, policy=POLICY, k=6
    )
    assert not cmp.exact
    for method in ("naive", "late"):
        assert [h.rank for h in cmp.results[method]] == list(range(1, 7))
    qvec = enc.encode_query("noise level")
    exact = {
        m: {
            cid: cos
            for cid, _, cos in rank_in_memory(
                qvec, np.stack([v for _, v in vs]), [c for c, _ in vs]
            )
        }
        for m, vs in vectors.items()
    }
    for change in cmp.rank_changes:
        for method in ("naive", "late"):
            assert change.scores[method] == pytest.approx(exact[method][change.chunk_id], abs=1e-5)
            if change.ranks[method] is None:
                assert change.chunk_id not in {h.chunk_id for h in cmp.results[method]}


def test_missing_index_and_unknown_document_are_user_errors(filled, enc):
    store, _ = filled
    other = ChunkPolicy(name="fixed", size=999)
    with pytest.raises(StoreError, match="nothing indexed"):
        compare("x", methods=["naive"], encoder=enc, store=store, policy=other)
    with pytest.raises(StoreError, match="no chunks of 'delta'"):
        compare("x", methods=["naive"], encoder=enc, store=store, policy=POLICY, doc_id="delta")
    with pytest.raises(ValueError):
        compare("x", methods=["naive", "naive"], encoder=enc, store=store, policy=POLICY)
    with pytest.raises(ValueError):
        compare("x", methods=["naive"], encoder=enc, store=store, policy=POLICY, k=0)


def test_comparison_to_dict_contract(filled, enc):
    store, _ = filled
    cmp = compare(
        "compressor pressure",
        methods=["naive", "late"],
        encoder=enc,
        store=store,
        policy=POLICY,
        k=3,
    )
    data = json.loads(json.dumps(comparison_to_dict(cmp)))
    assert data["query"] == "compressor pressure"
    assert set(data["results"]) == {"naive", "late"}
    for rows in data["results"].values():
        assert len(rows) == 3
        for row in rows:
            for key in (
                "rank",
                "chunk_id",
                "score",
                "char_start",
                "char_end",
                "pages",
                "citation",
                "text",
            ):
                assert key in row
            assert (
                row["citation"] == f"{row['doc_id']}, chars {row['char_start']}-{row['char_end']}"
            )
            assert len(row["text"]) == row["char_end"] - row["char_start"]
    for change in data["rank_changes"]:
        assert set(change["ranks"]) == {"naive", "late"}
        assert change["delta"] == change["ranks"]["late"] - change["ranks"]["naive"]


@pytest.mark.slow
def test_real_model_store_round_trip_and_exact_ranks(tmp_path):
    """Stored vectors equal freshly computed ones, and compare() ranks them exactly."""
    from conftest import PDF_DIR

    from core.embed import load_encoder
    from core.formats import load_document
    from core.index.indexer import default_steps, index_documents
    from core.methods.embedding import embed_chunks

    encoder = load_encoder()
    store = ChunkStore.open(tmp_path / "store")
    doc = load_document(PDF_DIR / "pypdfsf_pdflatex-outline.pdf")
    policy = ChunkPolicy(name="fixed", size=800, overlap=80)
    report = index_documents([doc], policy=policy, methods=METHODS, encoder=encoder, store=store)
    assert report.documents[0].indexed == METHODS
    steps = default_steps()
    chunks = steps.chunk(doc, steps.parse(doc, "fast"), policy, encoder)
    query = "how is the document outline built"
    cmp = compare(
        query, methods=METHODS, encoder=encoder, store=store, policy=policy, k=5, doc_id=doc.doc_id
    )
    qvec = encoder.encode_query(query)
    for method in METHODS:
        vectors = embed_chunks(doc, chunks, method, encoder)
        stored = store.scope_records(model=encoder.name, method=method, policy=policy)
        assert list(stored.ids) == [c.chunk_id for c in chunks]
        assert np.allclose(stored.matrix, np.stack([v.vector for v in vectors]), atol=1e-5)
        expected = rank_in_memory(qvec, np.stack([v.vector for v in vectors]), stored.ids)
        assert [h.chunk_id for h in cmp.results[method]] == [cid for cid, _, _ in expected[:5]]
        for hit, (_, _, cos) in zip(cmp.results[method], expected, strict=False):
            assert hit.score == pytest.approx(cos, abs=1e-5)
            assert hit.citation.verify(doc).value == "ok"
            assert hit.pages and hit.pages == doc.pages_of(hit.char_start, hit.char_end)


def test_equal_cosines_keep_chunk_order_not_insertion_order(tmp_path, enc):
    store = ChunkStore.open(tmp_path / "ties")
    shared = "The same boilerplate paragraph appears twice."
    for doc_id in ("zulu", "alpha"):  # inserted z first; chunk order puts alpha first
        doc = make_document(doc_id, f"{doc_id} intro text\n\n{shared}\n\n{shared}")
        chunks = paragraph_chunks(doc, POLICY)
        vectors = fake_embed_chunks(doc, chunks, "naive", enc)
        store.upsert_document(doc, chunks, vectors, model=enc.name, method="naive", policy=POLICY)
    cmp = compare(shared, methods=["naive"], encoder=enc, store=store, policy=POLICY, k=4)
    top = [(h.doc_id, h.chunk_index) for h in cmp.results["naive"]]
    assert top == [("alpha", 1), ("alpha", 2), ("zulu", 1), ("zulu", 2)]
    assert len({h.score for h in cmp.results["naive"]}) == 1
