"""The method registry, BM25 and fusions: scores against hand computation, rankings through
the store and the evaluation agree, and a lexical index follows its records."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from core import methods
from core.evaluate import EvalConfig, GoldSpan, LabelledQuery, run_eval
from core.index.indexer import default_steps, index_documents
from core.methods import UnknownMethodError
from core.methods.fusion import fuse_matrices, fuse_ranked
from core.methods.lexical import Bm25Index, matched_words, terms
from core.provenance.types import ChunkPolicy
from core.retrieve.comparison import compare
from core.store import ChunkStore
from core.store.lexical_index import cache_root, lexical_collection

POLICY = ChunkPolicy(name="fixed", size=300)
PARAGRAPHS = [
    "The Digidim 458 dimming curve is linear from one to ten volts.",
    "Pumps of the HX40 series run between five and forty degrees.",
    "The warranty of every pump covers parts and labour for three years.",
    "Filters are replaced every six months; pumps are serviced yearly.",
]


def hand_bm25(corpus: list[list[str]], query: list[str], k1=1.5, b=0.75) -> list[float]:
    """Lucene BM25 written out: idf = ln(1 + (N - df + .5)/(df + .5)), tf / (tf + k1 norm),
    summed over the query's terms (a repeated query term counts again)."""
    n = len(corpus)
    avg = sum(len(d) for d in corpus) / n
    out = []
    for doc in corpus:
        score = 0.0
        for term in query:
            df = sum(term in d for d in corpus)
            tf = doc.count(term)
            if not tf:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avg))
        out.append(score)
    return out


def test_bm25_scores_agree_with_a_hand_computation():
    index = Bm25Index.build(PARAGRAPHS)
    query = "pump warranty for the HX40 pumps"
    got = index.scores(query)
    expected = hand_bm25([terms(p) for p in PARAGRAPHS], terms(query))
    assert got.tolist() == pytest.approx(expected, rel=1e-5)
    assert terms(query) == ["pump", "warranti", "hx40", "pump"]
    assert set(np.argsort(-got)[:2].tolist()) == {1, 2}  # hx40 + pump, warranty + pump
    assert index.scores("zzz unknownword").tolist() == [0.0] * 4


def test_terms_are_stated_words_lowercased_stemmed_without_stopwords():
    assert terms("The Pumps are RUNNING at 458 rpm") == ["pump", "run", "458", "rpm"]
    text = "Pumps of the HX40 series"
    assert [text[a:b] for a, b in matched_words("hx40 pump", text)] == ["Pumps", "HX40"]


def test_rrf_and_weighted_fusion_agree_with_hand_computation():
    a = np.array([[0.9, 0.1, 0.5, 0.3]])  # ranks 1 4 2 3
    b = np.array([[0.0, 3.0, 1.0, 2.0]])  # ranks 4 1 3 2
    rrf = fuse_matrices(methods.get("hybrid(late,bm25;rrf60)"), [a, b])
    hand = [1 / 61 + 1 / 64, 1 / 64 + 1 / 61, 1 / 62 + 1 / 63, 1 / 63 + 1 / 62]
    assert rrf[0].tolist() == pytest.approx(hand)
    spec = methods.get("hybrid(late,bm25;w0.7,0.3)")
    wsum = fuse_matrices(spec, [a, b])
    scaled_a, scaled_b = (a - 0.1) / 0.8, b / 3.0
    assert wsum[0].tolist() == pytest.approx((0.7 * scaled_a + 0.3 * scaled_b)[0].tolist())
    tables = [{"x": (1, 0.9), "y": (2, 0.5)}, {"y": (1, 3.0), "z": (2, 1.0)}]
    assert fuse_ranked(methods.get("hybrid(late,bm25)"), tables) == pytest.approx(
        {"x": 1 / 61, "y": 1 / 62 + 1 / 61, "z": 1 / 62}
    )


def test_method_names_parse_to_canonical_fusions_and_bad_ones_say_why():
    names = methods.parse_methods("naive, hybrid(late,bm25),hybrid(late, bm25; w2,1),naive")
    assert names == ("naive", "hybrid(late,bm25;rrf60)", "hybrid(late,bm25;w2,1)")
    assert methods.needs_indexing(names) == ("naive", "late", "bm25")
    for bad, why in [
        ("smart", "unknown method 'smart'"),
        ("hybrid(late)", "two or more different"),
        ("hybrid(late,late)", "two or more different"),
        ("hybrid(late,nope)", "'nope' is not a registered method"),
        ("hybrid(late,bm25;w1)", "1 weights for 2 parts"),
        ("hybrid(late,bm25;x9)", "parameters are rrfK"),
        ("hybrid(late,bm25", "unbalanced"),
    ]:
        with pytest.raises(UnknownMethodError, match=why.replace("(", r"\(")):
            methods.parse_methods(bad)
    assert methods.delta_pairs(["late", "bm25", "naive"]) == [
        ("naive", "bm25"), ("naive", "late"), ("bm25", "late"),
    ]  # fmt: skip


def _docs():
    return [
        make_document(f"d{i}", "\n\n".join(PARAGRAPHS[i:] + PARAGRAPHS[:i]), title=f"Doc {i}")
        for i in range(2)
    ]


def _index(store, enc, docs, names, **kwargs):
    return index_documents(
        docs, policy=POLICY, methods=names, encoder=enc, store=store,
        steps=default_steps(fake_embed_chunks), **kwargs,
    )  # fmt: skip


def _with_paragraph_chunks(monkeypatch):
    import core.index.indexer as index_module

    monkeypatch.setattr(
        index_module, "_chunk", lambda doc, blocks, policy, enc: paragraph_chunks(doc, policy)
    )


def test_store_bm25_and_hybrid_rank_as_computed_by_hand(tmp_path, monkeypatch):
    _with_paragraph_chunks(monkeypatch)
    store, enc, docs = ChunkStore.open(tmp_path / "s"), FakeEncoder(), _docs()
    _index(store, enc, docs, ["naive", "bm25"])
    query = "Digidim 458 dimming curve"
    cmp = compare(
        query, methods=["naive", "bm25", "hybrid(naive,bm25)"], encoder=enc, store=store,
        policy=POLICY, k=8,
    )  # fmt: skip
    bm25 = cmp.results["bm25"]
    assert all("Digidim 458" in h.text for h in bm25[:2]) and bm25[0].score > bm25[2].score
    top = bm25[0]
    assert [top.text[a - top.char_start : b - top.char_start] for a, b in top.matched] == [
        "Digidim", "458", "dimming", "curve",
    ]  # fmt: skip
    naive = {h.chunk_id: h.rank for h in cmp.results["naive"]}
    lexical = {h.chunk_id: h.rank for h in bm25}
    hand = {c: 1 / (60 + naive[c]) + 1 / (60 + lexical[c]) for c in naive}
    fused = cmp.results["hybrid(naive,bm25;rrf60)"]
    assert [h.chunk_id for h in fused] == sorted(
        hand, key=lambda c: (-hand[c], min(naive[c], lexical[c]), c)
    )
    assert [h.score for h in fused] == pytest.approx(sorted(hand.values(), reverse=True))
    assert dict(fused[0].part_ranks) == {
        "naive": naive[fused[0].chunk_id],
        "bm25": lexical[fused[0].chunk_id],
    }
    for hit in fused:  # provenance is the chunk's, whichever part it came from
        doc = next(d for d in docs if d.doc_id == hit.doc_id)
        assert doc.text[hit.char_start : hit.char_end] == hit.text


def test_the_evaluation_ranks_bm25_and_fusions_as_the_store_does(tmp_path, monkeypatch):
    _with_paragraph_chunks(monkeypatch)
    store, enc, docs = ChunkStore.open(tmp_path / "s"), FakeEncoder(), _docs()
    _index(store, enc, docs, ["naive", "contextual-bm25", "bm25"])
    text = docs[0].text
    start = text.index(PARAGRAPHS[1])
    gold = GoldSpan(char_start=start, char_end=start + len(PARAGRAPHS[1]))
    query = LabelledQuery(id="q1", query="HX40 pumps degrees", doc="d0", gold=(gold,))
    names = ("naive", "bm25", "contextual-bm25", "hybrid(naive,bm25;rrf60)")
    run = run_eval(
        [query], docs, EvalConfig(policy=POLICY, methods=names, ks=(1, 5)), encoder=enc,
        embed=fake_embed_chunks, chunker=lambda d: paragraph_chunks(d, POLICY),
    )  # fmt: skip
    cmp = compare(query.query, methods=names, encoder=enc, store=store, policy=POLICY, k=8)
    for name in names:
        evaluated = [h.chunk_id for h in run.queries[0].top[name]]
        assert evaluated == [h.chunk_id for h in cmp.results[name]], name
    assert set(run.deltas) >= {"bm25-naive", "hybrid(naive,bm25;rrf60)-bm25"}


def test_a_lexical_index_follows_its_records_through_a_cancelled_run(tmp_path, monkeypatch):
    _with_paragraph_chunks(monkeypatch)
    store, enc = ChunkStore.open(tmp_path / "s"), FakeEncoder()
    docs = [make_document(f"n{i}", "\n\n".join(PARAGRAPHS) + f"\n\nNote {i}.") for i in range(4)]
    seen: list = []
    report = _index(
        store, enc, docs, ["bm25"], progress=seen.append, should_cancel=lambda: len(seen) >= 9
    )
    assert report.cancelled
    partial = lexical_collection(store, model=enc.name, method="bm25", policy=POLICY)
    assert partial is not None and len(partial.ids) < 20
    again = _index(store, enc, docs, ["bm25"])
    assert not again.cancelled
    col = lexical_collection(store, model=enc.name, method="bm25", policy=POLICY)
    stored = store.scope_records(model=enc.name, method="bm25", policy=POLICY)
    assert sorted(col.ids) == sorted(stored.ids) and len(set(col.ids)) == len(col.ids) == 20
    assert col.fingerprint != partial.fingerprint
    folders = list((cache_root(store) / col.name).iterdir())
    assert [f.name for f in folders] == [col.fingerprint]  # the stale index was removed


def test_a_registered_toy_method_is_offered_indexed_and_evaluated(tmp_path, monkeypatch, capsys):
    from core.cli import main
    from core.methods.spec import COSINE, MethodSpec

    def shouted(doc, chunks, encoder, *, progress=None, cache=None):
        from core.embed.records import ChunkVector

        matrix = encoder.encode_texts([c.text.upper() for c in chunks], progress=progress)
        return [
            ChunkVector(chunk_id=c.chunk_id, method="shouted", vector=v, token_count=1)
            for c, v in zip(chunks, matrix, strict=True)
        ]

    spec = MethodSpec(
        name="shouted", family="dense", score=COSINE, summary="upper-cased text",
        colour="#000000", order=5, index=shouted,
    )  # fmt: skip
    methods.register(spec)
    try:
        assert "shouted" in methods.base_methods()
        assert methods.get("hybrid(shouted,bm25)").parts == ("shouted", "bm25")
        with pytest.raises(SystemExit):
            main(["index", "--help"])
        assert "shouted" in capsys.readouterr().out
        _with_paragraph_chunks(monkeypatch)
        store, enc, docs = ChunkStore.open(tmp_path / "s"), FakeEncoder(), _docs()
        report = _index(store, enc, docs, methods.base_methods())
        assert all("shouted" in d.indexed for d in report.documents)
        cmp = compare("warranty", methods=["shouted"], encoder=enc, store=store, policy=POLICY)
        assert cmp.results["shouted"][0].method == "shouted"
        start = docs[0].text.index(PARAGRAPHS[2])
        gold = GoldSpan(char_start=start, char_end=start + len(PARAGRAPHS[2]))
        query = LabelledQuery(id="q", query="warranty labour", doc="d0", gold=(gold,))
        run = run_eval(
            [query], docs, EvalConfig(policy=POLICY, methods=("naive", "shouted"), ks=(1,)),
            encoder=enc, embed=fake_embed_chunks, chunker=lambda d: paragraph_chunks(d, POLICY),
        )  # fmt: skip
        assert "shouted" in run.metrics and "shouted-naive" in run.deltas
    finally:
        methods.unregister("shouted")
    assert "shouted" not in methods.base_methods()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([-1.0, 0.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.5]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=45),
)
def test_top_positions_are_the_head_of_a_stable_sort(values, depth):
    from core.retrieve.ranking import top_positions

    scores = np.asarray(values, dtype=np.float32)
    full = np.argsort(-scores, kind="stable")
    assert top_positions(scores, depth).tolist() == full[:depth].tolist()


def test_lexical_ranks_at_full_depth_equal_a_brute_force_ranking(tmp_path, monkeypatch):
    from core.retrieve.ranking import Scope, StoreRanker

    _with_paragraph_chunks(monkeypatch)
    store, enc = ChunkStore.open(tmp_path / "s"), FakeEncoder()
    docs = [
        make_document(f"n{i}", "\n\n".join(PARAGRAPHS[i % 4 :] + [f"pump {i}"])) for i in range(6)
    ]
    _index(store, enc, docs, ["bm25"])
    scope = Scope(store=store, model=enc.name, policy=POLICY, doc_id=None)
    ranking = StoreRanker(scope, query="pump warranty", qvec=None).rank("bm25", 3)
    col = lexical_collection(store, model=enc.name, method="bm25", policy=POLICY)
    brute = np.argsort(-col.index.scores("pump warranty"), kind="stable")
    assert len(ranking.ranked) == 3
    for rank, row in enumerate(brute, start=1):
        assert ranking.lookup(col.ids[row])[0] == rank


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_terms_and_matched_words_agree_on_any_text(text):
    from core.methods.lexical import word_spans

    spans = word_spans(text)
    assert terms(text) == [term for _, _, term in spans]
    for start, end, _ in spans:  # offsets are exact slices of the text itself
        assert text[start:end].strip() == text[start:end] and end > start


@pytest.mark.parametrize("scope", ["corpus", "doc"])
def test_the_evaluation_records_each_gold_rank_at_full_depth(scope):
    """The best gold chunk's rank over every chunk of the scope, under every method,
    equals its place in a brute-force stable ranking of the full score row."""
    docs = [
        make_document(f"d{i}", "\n\n".join(f"{p} Copy {i}{n}." for n, p in enumerate(PARAGRAPHS)))
        for i in range(3)
    ]  # no two chunks alike, so no tie decides a rank
    queries = []
    for n, para in enumerate(PARAGRAPHS):
        start = docs[1].text.index(para)
        gold = GoldSpan(char_start=start, char_end=start + len(para))
        queries.append(
            LabelledQuery(id=f"q{n}", query=para.split(".")[0][:30], doc="d1", gold=(gold,))
        )
    names = ("naive", "bm25", "hybrid(naive,bm25;rrf60)")
    config = EvalConfig(policy=POLICY, methods=names, ks=(1,), scope=scope)
    run = run_eval(
        queries, docs, config, encoder=FakeEncoder(), embed=fake_embed_chunks,
        chunker=lambda d: paragraph_chunks(d, POLICY),
    )  # fmt: skip
    assert all(q.scope_size == (4 if scope == "doc" else 12) for q in run.queries)
    enc = FakeEncoder()
    chunks = [c for d in sorted(docs, key=lambda d: d.doc_id) for c in paragraph_chunks(d, POLICY)]
    matrix = enc.encode_texts([c.text for c in chunks])
    for record in run.queries:  # naive brute force: every chunk scored, stable order
        scores = matrix @ enc.encode_query(record.query)
        keep = [i for i, c in enumerate(chunks) if scope == "corpus" or c.doc_id == "d1"]
        order = [keep[j] for j in np.argsort(-scores[keep], kind="stable")]
        spans = [(g.char_start, g.char_end) for g in record.gold]
        gold = {
            i for i, c in enumerate(chunks)
            if c.doc_id == "d1" and any(c.char_start < b and a < c.char_end for a, b in spans)
        }  # fmt: skip
        assert record.full_ranks["naive"] == 1 + min(order.index(i) for i in gold)
    for record in run.queries:
        for name in names:
            full = record.full_ranks[name]
            assert full is not None and 1 <= full <= record.scope_size
            if record.ranks[name] is not None:  # within the depth both agree
                assert full == record.ranks[name]


def test_an_unchanged_store_is_not_read_again_for_its_fingerprint(tmp_path, monkeypatch):
    """A query reads the markers only when the store's SQLite file changed; a write from
    another process is seen by the next query."""
    import os
    import subprocess
    import sys

    from core.store import lexical_index as lexical
    from core.store import markers

    _with_paragraph_chunks(monkeypatch)
    store, enc = ChunkStore.open(tmp_path / "s"), FakeEncoder()
    _index(store, enc, [make_document("a", "\n\n".join(PARAGRAPHS))], ["bm25"])
    reads: list[str] = []
    real = lexical._read_fingerprint
    monkeypatch.setattr(lexical, "_read_fingerprint", lambda s, n: reads.append(n) or real(s, n))
    first = lexical_collection(store, model=enc.name, method="bm25", policy=POLICY)
    for _ in range(3):
        assert lexical_collection(store, model=enc.name, method="bm25", policy=POLICY) is first
    assert len(reads) <= 1  # the indexing run may have read it last; then no query does
    marker = store.collection_name(enc.name, "bm25", POLICY)
    code = (
        "import sys, chromadb; c = chromadb.PersistentClient(path=sys.argv[1]);"
        "m = c.get_collection(sys.argv[2]); got = m.get(where={'collection': sys.argv[3]});"
        "metas = got['metadatas']; metas[0]['updated_at'] = metas[0]['updated_at'] + 1.0;"
        "m.update(ids=got['ids'][:1], metadatas=metas[:1])"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s"), markers.META_COLLECTION, marker],
        check=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    after = lexical_collection(store, model=enc.name, method="bm25", policy=POLICY)
    assert after is not None and after.fingerprint != first.fingerprint
