"""The vector cache: content-addressed hits skip the model; misses encode only new spans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_embed_encoder import (
    make_chunks,
    make_text_document,
    shared_tiny_dir,
)

from core.embed import VectorCache, load_encoder
from core.methods.embedding import embed_chunks
from core.provenance.types import ChunkPolicy

TEXT = " ".join(f"Sentence {i} says the unit keeps working at {i} degrees." for i in range(40))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    return load_encoder(shared_tiny_dir(tmp_path_factory), device="cpu")


def spans_of(size: int) -> list[tuple[int, int]]:
    return [(s, min(len(TEXT), s + size)) for s in range(0, len(TEXT), size)]


@pytest.mark.parametrize("method", ["naive", "contextual"])
def test_repeat_run_hits_and_new_spans_only_are_encoded(tiny, method: str) -> None:
    doc = make_text_document(TEXT)
    cache = VectorCache()
    first = make_chunks(doc, spans_of(200))
    cold = embed_chunks(doc, first, method, tiny, cache=cache)
    passes = tiny.forward_passes
    warm = embed_chunks(doc, first, method, tiny, cache=cache)
    assert tiny.forward_passes == passes  # nothing re-encoded
    assert cache.hits == len(first)
    for a, b in zip(cold, warm, strict=True):
        assert a.chunk_id == b.chunk_id and np.array_equal(a.vector, b.vector)
    # "Move the slider": another policy whose spans partly coincide with the old ones.
    other_policy = ChunkPolicy(name="fixed", size=400)
    second = make_chunks(doc, spans_of(200)[:3] + spans_of(400)[2:], policy=other_policy)
    new_spans = {(c.char_start, c.char_end) for c in second} - set(spans_of(200))
    records = embed_chunks(doc, second, method, tiny, cache=cache)
    assert tiny.forward_passes == passes + len(new_spans)
    assert [r.chunk_id for r in records] == [c.chunk_id for c in second]  # re-labelled hits
    fresh = embed_chunks(doc, second, method, tiny)
    for a, b in zip(records, fresh, strict=True):
        np.testing.assert_allclose(a.vector, b.vector, atol=1e-6)


def test_late_new_spans_reuse_token_states(tiny) -> None:
    doc = make_text_document(TEXT)
    cache = VectorCache()
    embed_chunks(doc, make_chunks(doc, spans_of(200)), "late", tiny, cache=cache)
    passes = tiny.forward_passes
    moved = make_chunks(doc, spans_of(333))
    records = embed_chunks(doc, moved, "late", tiny, cache=cache)
    assert tiny.forward_passes == passes  # pooled from cached states: no forward pass
    fresh = embed_chunks(doc, moved, "late", tiny)
    for a, b in zip(records, fresh, strict=True):
        np.testing.assert_allclose(a.vector, b.vector, atol=1e-5)
        assert (a.windows, a.context, a.full_context_tokens) == (
            b.windows,
            b.context,
            b.full_context_tokens,
        )
    # Another window policy is another key: it runs the model again.
    embed_chunks(doc, moved, "late", tiny, cache=cache, window_tokens=32, stride_tokens=24)
    assert tiny.forward_passes > passes


def test_contextual_prefix_is_part_of_the_key(tiny) -> None:
    doc = make_text_document(TEXT)
    cache = VectorCache()
    (a,) = make_chunks(doc, [(0, 100)], heading_paths=[("One",)])
    (b,) = make_chunks(doc, [(0, 100)], heading_paths=[("Two",)])
    embed_chunks(doc, [a], "contextual", tiny, cache=cache)
    passes = tiny.forward_passes
    embed_chunks(doc, [b], "contextual", tiny, cache=cache)
    assert tiny.forward_passes == passes + 1


def test_disk_cache_survives_a_new_process(tiny, tmp_path: Path) -> None:
    doc = make_text_document(TEXT)
    chunks = make_chunks(doc, spans_of(250))
    first = embed_chunks(doc, chunks, "late", tiny, cache=VectorCache(tmp_path / "vectors"))
    assert len(list((tmp_path / "vectors").glob("*.npz"))) == len(chunks)
    passes = tiny.forward_passes
    reopened = VectorCache(tmp_path / "vectors")
    again = embed_chunks(doc, chunks, "late", tiny, cache=reopened)
    assert tiny.forward_passes == passes and reopened.hits == len(chunks)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a.vector, b.vector)
        assert a.to_dict() == b.to_dict()


def test_damaged_disk_entry_is_recomputed(tiny, tmp_path: Path) -> None:
    doc = make_text_document(TEXT)
    chunks = make_chunks(doc, spans_of(400))
    cache = VectorCache(tmp_path)
    embed_chunks(doc, chunks, "naive", tiny, cache=cache)
    for path in tmp_path.glob("*.npz"):
        path.write_bytes(b"not a zip")
    passes = tiny.forward_passes
    records = embed_chunks(doc, chunks, "naive", tiny, cache=VectorCache(tmp_path))
    assert tiny.forward_passes == passes + len(chunks)
    assert all(abs(float(np.linalg.norm(r.vector)) - 1) < 1e-5 for r in records)


def test_max_tokens_is_part_of_the_key(tiny, tmp_path: Path) -> None:
    doc = make_text_document(TEXT)
    chunks = make_chunks(doc, [(0, len(TEXT))])
    cache = VectorCache()
    short = load_encoder(tiny.model_dir, device="cpu", max_tokens=32)
    a = embed_chunks(doc, chunks, "naive", tiny, cache=cache)[0]
    b = embed_chunks(doc, chunks, "naive", short, cache=cache)[0]
    assert a.truncated_tokens < b.truncated_tokens
    assert cache.hits == 0 and len(cache) == 2


def test_token_states_respect_the_memory_budget() -> None:
    cache = VectorCache(state_docs=3, state_bytes=1000)
    cache.put_states("m", "a", "w", np.zeros((10, 10), dtype=np.float32))  # 400 bytes
    cache.put_states("m", "b", "w", np.zeros((10, 10), dtype=np.float32))
    cache.put_states("m", "c", "w", np.zeros((10, 10), dtype=np.float32))  # over: drop "a"
    assert cache.get_states("m", "a", "w") is None
    assert cache.get_states("m", "b", "w") is not None
    cache.put_states("m", "huge", "w", np.zeros((100, 10), dtype=np.float32))  # never kept
    assert cache.get_states("m", "huge", "w") is None
    assert cache.get_states("m", "c", "w") is not None


def test_a_table_header_prefix_is_encoded_and_keys_its_own_vectors(tiny) -> None:
    """Under a ``-thp`` policy a split table's piece is encoded after its header rows
    (``Chunk.encoder_text``), so it never shares a cached vector with the bare span."""
    from dataclasses import replace

    from core.index.indexer import method_records

    doc = make_text_document(TEXT)
    plain = make_chunks(doc, [(200, 400)])[0]
    header = (0, 40)  # a "header row" before the piece
    policy = ChunkPolicy(name="structure", size=240, unit="tokens", table_header_prefix=True)
    piece = replace(
        plain, policy=policy, header_rows=(header,), header_text=doc.text[0:40],
        block_kinds=("table",),
    )  # fmt: skip
    assert piece.encoder_text == f"{doc.text[0:40]}\n{piece.text}"
    cache = VectorCache()
    bare = embed_chunks(doc, [plain], "naive", tiny, cache=cache)[0]
    read = embed_chunks(doc, [piece], "naive", tiny, cache=cache)[0]
    direct = tiny.encode_texts([piece.encoder_text])[0]
    assert float(read.vector @ direct) > 0.9999  # the header rows were read
    assert float(read.vector @ bare.vector) < 0.9999  # and not served from the bare span
    assert read.token_count == bare.token_count  # counts the chunk's own text
    (lexical,) = method_records(doc, [piece], "bm25", tiny)
    assert lexical.prefix == doc.text[0:40].strip()
