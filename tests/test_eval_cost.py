"""The cost of an evaluation before it starts, and the one on-disk cache after it ran.

The estimate must count exactly the texts the run then encodes; a second run of the same
evaluation through a new cache on the same folder (a restart) encodes nothing; the
defaults of eval, sweep and the Evaluate page are the first-look methods.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.embed import VectorCache
from core.embed.cache import default_cache_folder, shared_cache
from core.evaluate import EvalConfig, run_eval
from core.evaluate.cost import EvalCost, duration, estimate_cost
from core.index.indexer import method_records
from core.provenance.types import ChunkPolicy
from tests.fakes import FakeEncoder, paragraph_chunks
from tests.test_eval_runner import _docs, _queries, small_real_corpus

POLICY = ChunkPolicy(name="fixed", size=800, overlap=100)
CHUNKER = lambda doc: paragraph_chunks(doc, POLICY)  # noqa: E731


def _fake_run(encoder: FakeEncoder, cache: VectorCache) -> object:
    config = EvalConfig(policy=POLICY, methods=("naive", "contextual", "bm25"), ks=(1, 3))
    docs = _docs()
    return run_eval(_queries(docs), docs, config, encoder=encoder, embed=method_records,
                    chunker=CHUNKER, cache=cache)  # fmt: skip


def test_the_estimate_counts_the_texts_the_run_encodes_and_a_restart_encodes_none(
    tmp_path: Path,
) -> None:
    docs = _docs()
    config = EvalConfig(policy=POLICY, methods=("naive", "contextual", "bm25"), ks=(1, 3))
    encoder = FakeEncoder()
    before = estimate_cost(
        docs, config, encoder=encoder, cache=VectorCache(tmp_path), chunker=CHUNKER, rate=100.0
    )
    assert before.chunks == 6 and before.vectors == 12 and before.cached == 0
    assert before.texts == 12  # naive and contextual: every chunk once each; bm25 nothing
    _fake_run(encoder, VectorCache(tmp_path))
    queries = len([q for q in _queries(docs) if q.doc != "absent"])
    assert encoder.encoded == before.texts + queries  # the unresolved query is not encoded
    restarted = FakeEncoder()
    after = estimate_cost(
        docs, config, encoder=restarted, cache=VectorCache(tmp_path), chunker=CHUNKER, rate=1.0
    )
    assert (after.texts, after.cached) == (0, 12)
    assert after.sentence() == "a few seconds: all 12 vectors are cached"
    _fake_run(restarted, VectorCache(tmp_path))
    assert restarted.encoded == 0  # chunk vectors and query vectors all read back from disk


def test_the_sentence_says_the_time_and_the_count() -> None:
    cost = EvalCost(texts=2193, tokens=400_000, vectors=2193, cached=0, chunks=731,
                    seconds=170.0, tokens_per_s=2350.0)  # fmt: skip
    assert cost.sentence() == "about 3 min: 2,193 texts to embed"
    partly = EvalCost(texts=10, tokens=900, vectors=30, cached=20, chunks=10, seconds=3.0,
                      tokens_per_s=300.0)  # fmt: skip
    assert partly.sentence() == "about 5 s: 10 texts to embed (20 of 30 vectors cached)"
    assert duration(3700) == "1 h 2 min"


def test_the_shared_cache_lives_in_the_store_folder_and_can_be_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHUNKSCOPE_VECTOR_CACHE")
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    assert default_cache_folder() == (tmp_path / "store" / "vectors").resolve()
    assert shared_cache() is shared_cache()  # one per process and folder
    monkeypatch.setenv("CHUNKSCOPE_CHROMA", "not an address")  # eval never opens the store
    assert default_cache_folder() is not None
    monkeypatch.setenv("CHUNKSCOPE_VECTOR_CACHE", "off")
    assert shared_cache() is None


def test_run_eval_without_a_cache_uses_the_shared_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHUNKSCOPE_VECTOR_CACHE", str(tmp_path / "vectors"))
    docs = _docs()
    config = EvalConfig(policy=POLICY, methods=("naive",), ks=(1,))
    first, second = FakeEncoder(), FakeEncoder()
    for encoder in (first, second):
        run_eval(_queries(docs), docs, config, encoder=encoder, embed=method_records,
                 chunker=CHUNKER)  # fmt: skip
    assert first.encoded > 0 and second.encoded == 0
    assert any((tmp_path / "vectors").glob("*.npz"))


@pytest.mark.slow
def test_real_model_estimate_matches_the_sequences_run_and_a_restart_runs_none(
    tmp_path: Path,
) -> None:
    from core.embed import load_encoder

    doc, queries = small_real_corpus()
    encoder = load_encoder()
    config = EvalConfig(policy=POLICY, methods=("naive", "late", "bm25"), ks=(1, 5))
    cost = estimate_cost([doc], config, encoder=encoder, cache=VectorCache(tmp_path))
    assert cost.seconds is not None and cost.seconds > 0
    passes, tokens = encoder.forward_passes, encoder.forward_tokens
    first = run_eval(queries, [doc], config, encoder=encoder, cache=VectorCache(tmp_path))
    resolved = first.n_queries
    assert encoder.forward_passes - passes == cost.texts + resolved
    assert encoder.forward_tokens - tokens >= cost.tokens
    passes = encoder.forward_passes
    again = run_eval(queries, [doc], config, encoder=encoder, cache=VectorCache(tmp_path))
    assert encoder.forward_passes == passes  # nothing encoded: not a chunk, not a query
    assert again.metrics == first.metrics
    assert encoder.padded_share < 0.2  # batches of similar lengths


def test_the_progress_line_gives_the_counts_and_the_time_left() -> None:
    from core.evaluate.cost import progress_line

    assert progress_line(0, 186, 0.4) == "Embedding: 0 of 186 chunk × method units · 0 s so far"
    line = progress_line(62, 186, 40.0)
    assert line == ("Embedding: 62 of 186 chunk × method units · 40 s so far · about 1 min left")


def test_the_workbench_reads_and_writes_the_shared_cache_even_when_it_is_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.engine import resources as eng

    monkeypatch.setenv("CHUNKSCOPE_VECTOR_CACHE", str(tmp_path / "vectors"))
    eng.vector_cache.clear()
    try:
        cache = eng.vector_cache()
        assert len(cache) == 0 and cache.folder == (tmp_path / "vectors").resolve()
    finally:
        eng.vector_cache.clear()
