"""Late token states on disk: float16 round trip, the size bound (oldest out first), and
with the real model: vectors pooled from stored states equal fresh ones (cosine >= 0.9999),
a later policy pays no forward pass, and a changed document never reuses stale states."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_embed_encoder import make_chunks, make_text_document, shared_default_encoder

from core.embed import VectorCache
from core.embed.states import StateStore, state_key
from core.methods.embedding import embed_chunks
from core.provenance.types import ChunkPolicy

TEXT = "\n\n".join(
    f"Section {i}. The pump model HX{i} keeps its pressure at {10 * i} bar; the unit is "
    f"serviced every {i + 2} months and its seals are checked after each storm."
    for i in range(30)
)  # about 1,000 tokens: several 254-token windows


def _spans(text: str, size: int) -> list[tuple[int, int]]:
    return [(s, min(len(text), s + size)) for s in range(0, len(text), size)]


def _chunks(doc, size: int):
    return make_chunks(doc, _spans(doc.text, size), policy=ChunkPolicy(name="fixed", size=size))


def test_states_round_trip_as_float16(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    states = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    store.put("m", "sha", "w254", states)
    back = store.get("m", "sha", "w254")
    assert back is not None and back.dtype == np.float16 and back.shape == (50, 8)
    np.testing.assert_allclose(back, states, rtol=1e-3, atol=1e-3)
    assert store.get("m", "other-sha", "w254") is None
    assert store.get("m", "sha", "w510") is None
    assert store.get("m", "sha", "w254", shape=(49, 8)) is None
    assert store.size_bytes() >= 50 * 8 * 2


def test_the_folder_stays_under_its_bound_oldest_out_first(tmp_path: Path) -> None:
    entry = np.zeros((100, 16), dtype=np.float32)  # 3,200 bytes as float16
    store = StateStore(tmp_path)
    for i, name in enumerate("abc"):
        store.put("m", name, "w", entry)
        os.utime(store._path(state_key("m", name, "w")), ns=(i * 10**9, i * 10**9))
    store.max_bytes = store.size_bytes()  # room for these three entries, not a fourth
    assert store.get("m", "a", "w") is not None  # a read makes "a" the newest
    store.put("m", "d", "w", entry)
    assert store.size_bytes() <= store.max_bytes
    assert store.get("m", "b", "w") is None  # the oldest by last use went first
    assert all(store.get("m", x, "w") is not None for x in "acd")


def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.put("m", "sha", "w", np.ones((4, 4), dtype=np.float32))
    path = store._path(state_key("m", "sha", "w"))
    path.write_bytes(b"not a zip")
    assert store.get("m", "sha", "w") is None and not path.exists()


@pytest.mark.slow
def test_pooled_from_stored_states_equals_fresh_without_a_forward_pass(tmp_path: Path) -> None:
    encoder = shared_default_encoder()
    doc = make_text_document(TEXT)
    embed_chunks(doc, _chunks(doc, 300), "late", encoder, cache=VectorCache(tmp_path))
    # A new process: nothing in memory, no vector folder (an empty cache is falsy), the
    # states on disk where VectorCache(tmp_path) put them.
    cold = VectorCache(state_folder=tmp_path / "states")
    passes = encoder.forward_passes
    for size in (150, 500, 1200):
        chunks = _chunks(doc, size)
        pooled = embed_chunks(doc, chunks, "late", encoder, cache=cold)
        assert encoder.forward_passes == passes  # pooling only
        fresh = embed_chunks(doc, chunks, "late", encoder)
        passes = encoder.forward_passes
        for a, b in zip(pooled, fresh, strict=True):
            assert float(a.vector @ b.vector) >= 0.9999
            assert (a.windows, a.context, a.token_count) == (b.windows, b.context, b.token_count)
    assert cold.state_store is not None and cold.state_store.reads == 1


@pytest.mark.slow
def test_a_changed_document_never_reuses_stale_states(tmp_path: Path) -> None:
    encoder = shared_default_encoder()
    old = make_text_document(TEXT)
    embed_chunks(old, _chunks(old, 300), "late", encoder, cache=VectorCache(tmp_path))
    new = make_text_document(TEXT.replace("storm", "flood"))  # same id, other bytes
    cache = VectorCache(tmp_path)
    passes = encoder.forward_passes
    records = embed_chunks(new, _chunks(new, 300), "late", encoder, cache=cache)
    assert encoder.forward_passes > passes  # encoded again
    fresh = embed_chunks(new, _chunks(new, 300), "late", encoder)
    for a, b in zip(records, fresh, strict=True):
        np.testing.assert_allclose(a.vector, b.vector, atol=1e-6)
    # Even states stored under the new document's key are refused if they do not fit it.
    policy = cache._states.keys()[0][2]
    cache.clear()
    cache.state_store.put(encoder.identity, new.sha256, policy, np.zeros((5, encoder.dim)))
    passes = encoder.forward_passes
    again = embed_chunks(new, _chunks(new, 450), "late", encoder, cache=cache)
    assert encoder.forward_passes > passes
    assert all(np.linalg.norm(r.vector) > 0.99 for r in again)


def test_the_bound_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    from core.errors import ChunkscopeError

    monkeypatch.setenv("CHUNKSCOPE_STATE_CACHE_MB", "3")
    assert StateStore(tmp_path).max_bytes == 3 * 2**20
    monkeypatch.setenv("CHUNKSCOPE_STATE_CACHE_MB", "0")
    with pytest.raises(ChunkscopeError, match="positive number of MB"):
        StateStore(tmp_path)
    monkeypatch.delenv("CHUNKSCOPE_STATE_CACHE_MB")
    assert StateStore(tmp_path).max_bytes == 2 * 2**30
