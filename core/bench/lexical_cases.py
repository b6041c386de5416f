"""Lexical cases: building a BM25 index, and a BM25 query against our dense query.

- build: ``core.methods.lexical.Bm25Index.build`` (our stated tokenisation + bm25s) over
  ``BUILD_CHUNKS`` chunks of 800 characters cut from the headline document, against
  bm25s's own pipeline (``bm25s.tokenize`` with the same stemmer and stopwords, then
  ``BM25.index``); target: at most ``BUILD_LIMIT_S`` seconds.
- query at scale: a top-10 BM25 query through ``core.retrieve.ranking.StoreRanker`` (the freshness
  check of the persisted index against the store's markers, scoring every chunk,
  selecting and hydrating the top 10 into checked records) against a top-10 dense query
  through ``ChunkStore.query`` on a collection of the same size and the same records
  (``store_cases``); target: p50 at most 10 ms and at most 0.5x the dense query.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.bench.inputs import BenchInputs
from core.bench.report import CaseResult
from core.bench.store_cases import (
    DENSE,
    SEED,
    TOP_K,
    _ensure_scale,
    _unit_vectors,
    _with_extra,
    model_dim,
)
from core.bench.timing import interleaved, timed
from core.methods import BENCHED
from core.methods.lexical import Bm25Index, _stemmer
from core.retrieve.ranking import Scope, StoreRanker
from core.store import ChunkStore, markers, scan
from core.store.lexical_index import lexical_collection

LEXICAL = BENCHED.lexical

BUILD_CHUNKS = 10_000
BUILD_CHARS = 800
BUILD_LIMIT_S = 2.0
QUERY_LIMIT_S = 0.010


def _cut(text: str, n: int, width: int) -> list[str]:
    room = max(1, len(text) - width)
    return [text[(i * 7919) % room : (i * 7919) % room + width] for i in range(n)]


def build_case(inputs: BenchInputs) -> CaseResult:
    import bm25s

    s = inputs.settings
    texts = _cut(inputs.document(s.pdf).text, BUILD_CHUNKS, BUILD_CHARS)

    def theirs(step: int) -> Any:
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False)
        retriever = bm25s.BM25(method="lucene")
        retriever.index(tokens, show_progress=False)
        return retriever

    t = interleaved(
        {"ours": lambda step: Bm25Index.build(texts), "raw": theirs},
        warmup=1,
        repeats=max(2, s.repeats // 2),
    )
    return CaseResult(
        key="lexical:build",
        case="lexical",
        label=f"{LEXICAL} index build, {BUILD_CHUNKS:,} chunks of {BUILD_CHARS} chars",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="bm25s tokenize + index",
        max_ours=BUILD_LIMIT_S,
        target=f"<= {BUILD_LIMIT_S:.0f} s",
        notes=("ours: \\w+ terms, stopwords, Snowball stems, then bm25s",),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


def _ensure_lexical(store: Any, doc: Any, n: int, model: str, policy: Any) -> float | None:
    """The bm25 twin of the synthetic dense collection (same ids, spans and texts), with
    a completion marker; returns its build time, None when reused."""
    name = store.collection_name(model, LEXICAL, policy)
    col = store.client.get_or_create_collection(
        name, metadata={"hnsw:space": "cosine", "model": model}, embedding_function=None
    )
    if col.count() == n:
        return None
    dense = store.client.get_collection(
        store.collection_name(model, DENSE, policy), embedding_function=None
    )

    def fill() -> None:
        batch = int(store.client.get_max_batch_size())
        for page in scan.iter_pages(dense, include=["metadatas", "documents"]):
            for lo in range(0, len(page["ids"]), batch):
                hi = lo + batch
                metas = [{**m, "method": LEXICAL, "prefix": ""} for m in page["metadatas"][lo:hi]]
                col.upsert(
                    ids=page["ids"][lo:hi], embeddings=[[1.0]] * len(metas),
                    metadatas=metas, documents=page["documents"][lo:hi],
                )  # fmt: skip
        meta = store._meta(create=True)
        markers.write(
            meta, doc, collection=name, n_chunks=n, model=model, method=LEXICAL,
            policy=policy, complete=True,
        )  # fmt: skip

    elapsed, _ = timed(fill)
    return elapsed


def query_case(inputs: BenchInputs, n: int) -> CaseResult:
    s = inputs.settings
    doc = inputs.document(s.pdf)
    store = ChunkStore.open(s.cache_dir / "scale")
    model, policy, _ = _ensure_scale(store, doc, n)
    built = _ensure_lexical(store, doc, n, model, policy)
    index_s, _ = timed(
        lambda: lexical_collection(store, model=model, method=LEXICAL, policy=policy)
    )
    words = doc.text.split()
    rng = np.random.default_rng(SEED + 3)
    starts = rng.integers(0, max(1, len(words) - 3), size=2 + s.scale_queries)
    queries = [" ".join(words[a : a + 3]) for a in starts]
    vectors = _unit_vectors(len(queries), model_dim(), SEED + 2)
    scope = Scope(store=store, model=model, policy=policy, doc_id=None)

    def lexical(step: int) -> Any:
        ranker = StoreRanker(scope, query=queries[step], qvec=None)
        return ranker.rank(LEXICAL, TOP_K).top(TOP_K)

    t = interleaved(
        {
            "ours": lexical,
            "raw": lambda step: store.query(
                vectors[step], model=model, method=DENSE, policy=policy
            ),
        },
        warmup=2,
        repeats=s.scale_queries,
        check=_check,
    )
    reused = "reused" if built is None else f"stored in {built:.0f} s"
    row = CaseResult(
        key=f"lexical:query:{n}",
        case="lexical",
        label=f"{LEXICAL} query p50 in {n:,}",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="our dense query",
        max_ratio=0.5,
        max_ours=QUERY_LIMIT_S,
        target="<= 10 ms, <= 0.5x",
        notes=(
            f"{s.scale_queries} queries of 3 words; p95 ours "
            f"{t['ours'].percentile_s(95) * 1e3:.1f} ms; records {reused}; index loaded or "
            f"built in {index_s:.1f} s, then kept in memory",
        ),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )
    return _with_extra(row, {"index_s": index_s, "vectors": n})


def _check(name: str, result: Any) -> None:
    for hit in result:
        if len(hit.text) != hit.char_end - hit.char_start:
            raise AssertionError(f"hit {hit.chunk_id} does not fill its span")
