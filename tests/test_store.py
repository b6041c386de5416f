"""The Chroma chunk store: names, provenance round trip, idempotency, replacement, markers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks

from core.config import ENV_CHROMA, ENV_STORE, parse_host, resolve_store
from core.errors import StoreError
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore
from core.store.chroma_records import chunk_metadata

ROOT = Path(__file__).resolve().parent.parent
POLICY = ChunkPolicy(name="fixed", size=400, overlap=0)
TEXT_A = "\n\n".join(
    [
        "The pump moves water from the lower tank.",
        "Its motor draws 40 W at full speed, 12 W idle.",
        "Café crème — naïve résumé; 数据 and emoji 🚀 survive the round trip.",
        "When the float switch opens, the unit stops within two seconds.",
    ]
)
TEXT_B = "\n\n".join(
    ["A ledger records every payment.", "Entries are never edited, only reversed."]
)


@pytest.fixture()
def store(tmp_path):
    return ChunkStore.open(tmp_path / "store")


@pytest.fixture()
def enc():
    return FakeEncoder()


def put(store, enc, doc, method="naive", policy=POLICY, chunks=None, **kw):
    chunks = paragraph_chunks(doc, policy) if chunks is None else chunks
    vectors = fake_embed_chunks(doc, chunks, method, enc)
    report = store.upsert_document(
        doc, chunks, vectors, model=enc.name, method=method, policy=policy, **kw
    )
    return chunks, vectors, report


def stored_ids(store, enc, method="naive", policy=POLICY, doc_id=None):
    recs = store.scope_records(model=enc.name, method=method, policy=policy, doc_id=doc_id)
    return list(recs.ids)


@pytest.mark.parametrize(
    "model",
    ["all-MiniLM-L6-v2", "/home/me/models/my model (v2)/", "ünïcödé-模型", "x", "a" * 600, "..."],
)
@pytest.mark.parametrize("method", ["naive", "late", "contextual"])
def test_collection_names_are_valid_chroma_names(tmp_path, model, method):
    name = ChunkStore.collection_name(model, method, POLICY)
    assert 3 <= len(name) <= 512
    assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]", name)
    assert ".." not in name
    assert name == ChunkStore.collection_name(model, method, POLICY)


def test_collection_names_separate_models_methods_and_policies():
    other = ChunkPolicy(name="fixed", size=400, overlap=50)
    names = {
        ChunkStore.collection_name(m, meth, p)
        for m in ("all-MiniLM-L6-v2", "ALL-MiniLM-L6-v2", "/a/all-MiniLM-L6-v2")
        for meth in ("naive", "late", "contextual")
        for p in (POLICY, other)
    }
    assert len(names) == 3 * 3 * 2


def test_collections_are_cosine_and_never_embed_text(store, enc):
    put(store, enc, make_document("a", TEXT_A))
    col = store.client.get_collection(ChunkStore.collection_name(enc.name, "naive", POLICY))
    assert col.configuration_json["hnsw"]["space"] == "cosine"
    assert col.configuration_json.get("embedding_function") is None


def test_a_collection_is_read_through_the_stores_public_reader(store, enc):
    chunks, _, _ = put(store, enc, make_document("a", TEXT_A))
    name = ChunkStore.collection_name(enc.name, "naive", POLICY)
    assert store.read_collection(name, lambda col: col.count(), 0) == len(chunks)
    missing = ChunkStore.collection_name(enc.name, "late", POLICY)
    assert store.read_collection(missing, lambda col: col.count(), "none") == "none"


def test_round_trip_keeps_full_provenance(store, enc):
    doc = make_document("a", TEXT_A, title="Pump manual")
    chunks, vectors, report = put(store, enc, doc, method="late")
    assert report.upserted == len(chunks) == 4
    for i, chunk in enumerate(chunks):
        hits = store.query(vectors[i].vector, model=enc.name, method="late", policy=POLICY, k=1)
        hit = hits[0]
        assert hit.chunk_id == chunk.chunk_id and hit.rank == 1
        assert hit.score == pytest.approx(1.0, abs=1e-5)
        assert (hit.doc_id, hit.doc_sha256) == (doc.doc_id, doc.sha256)
        assert (hit.char_start, hit.char_end, hit.text) == (
            chunk.char_start,
            chunk.char_end,
            chunk.text,
        )
        assert doc.text[hit.char_start : hit.char_end] == hit.text
        assert hit.heading_path == chunk.heading_path
        assert hit.block_kinds == chunk.block_kinds
        assert hit.chunk_index == i
        assert (hit.method, hit.model, hit.policy_key) == ("late", enc.name, POLICY.key)
        assert hit.windows == (0,) and hit.context == "full"
        assert hit.token_count == vectors[i].token_count
        assert hit.doc_title == "Pump manual"
        assert hit.citation.verify(doc).value == "ok"
        assert hit.citation.render() == f"a, chars {chunk.char_start}-{chunk.char_end}"


def test_metadata_has_no_none_and_encodes_tuples():
    doc = make_document("a", TEXT_A)
    chunk = paragraph_chunks(doc, POLICY)[0]
    vec = fake_embed_chunks(doc, [chunk], "late", FakeEncoder())[0]
    meta = chunk_metadata(doc, chunk, vec, chunk_index=0, model="m", method="late", policy=POLICY)
    assert all(isinstance(v, (str, int, float, bool)) for v in meta.values())
    assert json.loads(meta["heading_path"]) == list(chunk.heading_path)
    assert meta["windows"] == "0" and meta["pages"] == ""
    for key in ("doc_id", "doc_sha256", "char_start", "char_end", "policy", "method", "model"):
        assert key in meta
    with pytest.raises(ValueError):
        chunk_metadata(doc, chunk, vec, chunk_index=0, model="m", method="naive", policy=POLICY)
    other = make_document("b", TEXT_B)
    with pytest.raises(ValueError):
        chunk_metadata(other, chunk, vec, chunk_index=0, model="m", method="late", policy=POLICY)


def test_pages_round_trip(store, enc):
    doc = make_document("p", TEXT_B)
    from dataclasses import replace

    chunks = [replace(c, pages=(3, 4)) for c in paragraph_chunks(doc, POLICY)]
    put(store, enc, doc, chunks=chunks)
    hit = store.query(enc.encode_query("ledger"), model=enc.name, method="naive", policy=POLICY)[0]
    assert hit.pages == (3, 4)
    assert hit.citation.render().startswith("p, pp. 3-4, chars ")


def test_upsert_is_idempotent(store, enc):
    doc = make_document("a", TEXT_A)
    put(store, enc, doc)
    first = stored_ids(store, enc)
    _, _, report = put(store, enc, doc)
    assert stored_ids(store, enc) == first
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 4
    assert report.deleted_other_sha == 0 and report.deleted_leftover == 0


def test_changed_document_replaces_its_records(store, enc):
    old = make_document("a", TEXT_A)
    put(store, enc, old)
    put(store, enc, make_document("b", TEXT_B))
    new = make_document("a", TEXT_A.replace("40 W", "45 W") + "\n\nA new closing paragraph.")
    assert store.records_with_other_sha("a", new.sha256) == 4
    assert store.records_with_other_sha("a", old.sha256) == 0
    chunks, _, report = put(store, enc, new)
    assert report.deleted_other_sha == 4
    recs = store.scope_records(model=enc.name, method="naive", policy=POLICY, doc_id="a")
    assert {m["doc_sha256"] for m in recs.metadatas} == {new.sha256}
    assert list(recs.ids) == [c.chunk_id for c in chunks]
    assert store.doc_count("b", model=enc.name, method="naive", policy=POLICY) == 2
    assert store.records_with_other_sha("a", new.sha256) == 0
    assert not store.is_indexed(old, model=enc.name, method="naive", policy=POLICY)
    assert store.is_indexed(new, model=enc.name, method="naive", policy=POLICY)


def test_chunks_no_longer_produced_are_removed(store, enc):
    doc = make_document("a", TEXT_A)
    chunks = paragraph_chunks(doc, POLICY)
    put(store, enc, doc, chunks=chunks)
    _, _, report = put(store, enc, doc, chunks=chunks[:2])
    assert report.deleted_leftover == 2
    assert stored_ids(store, enc) == [c.chunk_id for c in chunks[:2]]
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=2)


def test_completion_marker_only_after_every_batch(tmp_path, enc):
    store = ChunkStore.open(tmp_path / "s", batch_size=1)
    doc = make_document("a", TEXT_A)
    calls = []

    def stop_after_two(done, total):
        calls.append((done, total))
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        put(store, enc, doc, progress=stop_after_two)
    assert calls == [(1, 4), (2, 4)]
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 2
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)
    (listed,) = store.indexed_documents()
    assert not listed.complete and listed.n_chunks == 4
    _, _, report = put(store, enc, doc)
    assert report.batches == 4
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 4
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=4)
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=5)
    assert not store.is_indexed(doc, model=enc.name, method="late", policy=POLICY)


def test_marker_without_records_is_not_indexed(store, enc):
    doc = make_document("a", TEXT_A)
    chunks, _, _ = put(store, enc, doc)
    col = store.client.get_collection(ChunkStore.collection_name(enc.name, "naive", POLICY))
    col.delete(ids=[chunks[0].chunk_id])
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)


def test_records_of_an_older_parse_revision_are_not_reused(store, enc, monkeypatch):
    """Same bytes read by a newer parser: the stored spans may not fit its text, so the
    version counts as not indexed (and the next index run writes it again)."""
    import core.store.markers as markers

    doc = make_document("a", TEXT_A)
    put(store, enc, doc)
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)
    (entry,) = store.indexed_documents()
    assert entry.parse_revision == markers.PARSE_REVISION
    monkeypatch.setattr(markers, "PARSE_REVISION", markers.PARSE_REVISION + 1)
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)
    put(store, enc, doc)
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)


def test_indexed_documents_over_all_collections(store, enc):
    a, b = make_document("a", TEXT_A, title="Pump"), make_document("b", TEXT_B)
    other = ChunkPolicy(name="structure", size=800)
    put(store, enc, a)
    put(store, enc, a, method="late")
    put(store, enc, b, policy=other)
    listed = store.indexed_documents()
    keys = [(d.doc_id, d.method, d.policy_key, d.n_chunks, d.complete) for d in listed]
    assert keys == [
        ("a", "late", POLICY.key, 4, True),
        ("a", "naive", POLICY.key, 4, True),
        ("b", "naive", other.key, 2, True),
    ]
    assert listed[0].title == "Pump" and listed[0].sha256 == a.sha256
    assert listed[2].policy == other and listed[2].model == enc.name


def test_query_scoped_to_one_document(store, enc):
    put(store, enc, make_document("a", TEXT_A))
    put(store, enc, make_document("b", TEXT_B))
    q = enc.encode_query("ledger payment")
    everywhere = store.query(q, model=enc.name, method="naive", policy=POLICY, k=10)
    assert len(everywhere) == 6 and everywhere[0].doc_id == "b"
    assert [h.rank for h in everywhere] == list(range(1, 7))
    assert all(a.score >= b.score - 1e-6 for a, b in zip(everywhere, everywhere[1:], strict=False))
    only_a = store.query(q, model=enc.name, method="naive", policy=POLICY, k=10, doc_id="a")
    assert {h.doc_id for h in only_a} == {"a"} and len(only_a) == 4
    assert store.query(q, model=enc.name, method="late", policy=POLICY) == []


def test_scope_records_in_chunk_order(store, enc):
    put(store, enc, make_document("b", TEXT_B))
    chunks, vectors, _ = put(store, enc, make_document("a", TEXT_A))
    recs = store.scope_records(model=enc.name, method="naive", policy=POLICY)
    assert [m["doc_id"] for m in recs.metadatas] == ["a"] * 4 + ["b"] * 2
    assert list(recs.ids[:4]) == [c.chunk_id for c in chunks]
    assert np.allclose(recs.matrix[:4], np.stack([v.vector for v in vectors]), atol=1e-6)
    some = store.scope_records(
        model=enc.name, method="naive", policy=POLICY, ids=[chunks[2].chunk_id, "nope"]
    )
    assert some.ids == (chunks[2].chunk_id,)
    none = store.scope_records(model=enc.name, method="late", policy=POLICY)
    assert none.ids == () and none.matrix.shape == (0, 0)


def test_vectors_and_nearest_ids(store, enc):
    put(store, enc, make_document("b", TEXT_B))
    chunks, vectors, _ = put(store, enc, make_document("a", TEXT_A))
    ids, matrix = store.scope_vectors(model=enc.name, method="naive", policy=POLICY, doc_id="a")
    assert sorted(ids) == sorted(c.chunk_id for c in chunks) and matrix.shape == (4, enc.dim)
    by_id = dict(zip(ids, matrix, strict=True))
    for chunk, vec in zip(chunks, vectors, strict=True):
        assert np.allclose(by_id[chunk.chunk_id], vec.vector, atol=1e-6)
    found = store.nearest(vectors[1].vector, model=enc.name, method="naive", policy=POLICY, n=3)
    assert found[0][0] == chunks[1].chunk_id and found[0][1] == pytest.approx(1.0, abs=1e-5)
    assert len(found) == 3 and all(
        a[1] >= b[1] - 1e-6 for a, b in zip(found, found[1:], strict=False)
    )
    assert store.nearest(vectors[1].vector, model=enc.name, method="late", policy=POLICY, n=3) == []
    assert store.scope_vectors(model=enc.name, method="late", policy=POLICY)[0] == []


def test_delete_document(store, enc):
    put(store, enc, make_document("a", TEXT_A))
    put(store, enc, make_document("a", TEXT_A), method="late")
    put(store, enc, make_document("b", TEXT_B))
    assert store.delete_document("a") == 8
    assert [d.doc_id for d in store.indexed_documents()] == ["b"]
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 2


def test_rejects_inconsistent_input(store, enc):
    doc = make_document("a", TEXT_A)
    chunks = paragraph_chunks(doc, POLICY)
    vectors = fake_embed_chunks(doc, chunks, "naive", enc)
    with pytest.raises(ValueError):
        store.upsert_document(
            doc, chunks, vectors[:-1], model=enc.name, method="naive", policy=POLICY
        )
    with pytest.raises(ValueError):
        store.upsert_document(
            doc,
            chunks + chunks[:1],
            vectors + vectors[:1],
            model=enc.name,
            method="naive",
            policy=POLICY,
        )
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 0


def test_empty_document_is_marked_complete(store, enc):
    doc = make_document("empty", "")
    put(store, enc, doc, chunks=[])
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=0)


def test_store_survives_a_process_restart(tmp_path, enc):
    folder = tmp_path / "persist"
    store = ChunkStore.open(folder)
    chunks, _, _ = put(store, enc, make_document("a", TEXT_A))
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from core.store import ChunkStore
        from core.provenance.types import ChunkPolicy
        s = ChunkStore.open({str(folder)!r})
        p = ChunkPolicy(name="fixed", size=400)
        recs = s.scope_records(model={enc.name!r}, method="naive", policy=p)
        docs = [(d.doc_id, d.n_chunks, d.complete) for d in s.indexed_documents()]
        print(json.dumps({{"ids": list(recs.ids), "docs": docs}}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["ids"] == [c.chunk_id for c in chunks]
    assert seen["docs"] == [["a", 4, True]]


def test_unreachable_server_is_a_store_error():
    import socket

    with socket.socket() as sock:  # a loopback port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreError, match="cannot reach a Chroma server"):
        ChunkStore.open(host=f"127.0.0.1:{port}")


def test_store_folder_that_is_a_file_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open the store folder"):
        ChunkStore.open(blocker)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("127.0.0.1:8000", ("127.0.0.1", 8000)), ("[::1]:9", ("::1", 9)), ("db:1", ("db", 1))],
)
def test_parse_host(value, expected):
    assert parse_host(value) == expected


@pytest.mark.parametrize("value", ["localhost", ":8000", "h:0", "h:99999", "http://h:1", "h:x"])
def test_parse_host_rejects(value):
    with pytest.raises(StoreError):
        parse_host(value)


def test_store_resolution_order(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_CHROMA, raising=False)
    monkeypatch.delenv(ENV_STORE, raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_store().path == tmp_path.resolve() / ".chunkscope"
    monkeypatch.setenv(ENV_STORE, str(tmp_path / "env"))
    assert resolve_store().path == (tmp_path / "env").resolve()
    monkeypatch.setenv(ENV_CHROMA, "127.0.0.1:8123")
    loc = resolve_store()
    assert (loc.host, loc.port, loc.path) == ("127.0.0.1", 8123, None)
    assert resolve_store(tmp_path / "cli").path == (tmp_path / "cli").resolve()
    assert resolve_store(host="h:1").host == "h"
    with pytest.raises(StoreError, match="not both"):
        resolve_store(tmp_path, "h:1")


def test_default_batch_is_the_clients_maximum(tmp_path, enc):
    store = ChunkStore.open(tmp_path / "s")
    assert store.batch_size == store.max_batch_size == store.client.get_max_batch_size()
    _, _, report = put(store, enc, make_document("a", TEXT_A))
    assert report.batches == 1
    small = ChunkStore.open(tmp_path / "t", batch_size=3)
    assert small.batch_size == 3
    _, _, report = put(small, enc, make_document("a", TEXT_A))
    assert report.batches == 2
    huge = ChunkStore.open(tmp_path / "u", batch_size=10**9)
    assert huge.batch_size == huge.max_batch_size


def test_query_asks_for_more_than_stored(store, enc):
    doc = make_document("b", TEXT_B)
    chunks, vectors, _ = put(store, enc, doc)
    hits = store.query(vectors[0].vector, model=enc.name, method="naive", policy=POLICY, k=50)
    assert [h.chunk_id for h in hits][:1] == [chunks[0].chunk_id] and len(hits) == 2
    assert [h.rank for h in hits] == [1, 2]
    scoped = dict(model=enc.name, method="naive", policy=POLICY, k=50, doc_id="zz")
    assert store.query(vectors[0].vector, **scoped) == []
    assert store.query(vectors[0].vector, model=enc.name, method="naive", policy=POLICY, k=0) == []
    put(store, enc, make_document("e", ""), chunks=[], method="late")
    assert store.query(vectors[0].vector, model=enc.name, method="late", policy=POLICY) == []


def test_cached_handles_survive_delete_and_recreate(tmp_path, enc):
    store = ChunkStore.open(tmp_path / "s")
    doc = make_document("a", TEXT_A)
    chunks, vectors, _ = put(store, enc, doc)
    q = vectors[0].vector
    assert store.query(q, model=enc.name, method="naive", policy=POLICY, k=1)
    name = ChunkStore.collection_name(enc.name, "naive", POLICY)
    store.client.delete_collection(name)
    assert store.query(q, model=enc.name, method="naive", policy=POLICY) == []
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 0
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY)
    other = ChunkStore.open(tmp_path / "s")  # recreates the collection under the same name
    put(other, enc, doc)
    store.client.delete_collection(name)
    put(other, enc, doc)
    hits = store.query(q, model=enc.name, method="naive", policy=POLICY, k=1)
    assert hits[0].chunk_id == chunks[0].chunk_id
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=4)
    store.client.delete_collection("chunkscope-meta")
    assert store.indexed_documents() == []
    store.client.delete_collection(name)
    _, _, report = put(store, enc, doc)  # both cached handles are stale here
    assert report.upserted == 4 and store.is_indexed(
        doc, model=enc.name, method="naive", policy=POLICY
    )
    assert [d.doc_id for d in other.indexed_documents()] == ["a"]


def test_killed_rewrite_of_a_complete_version_is_not_indexed(tmp_path, enc):
    """Same bytes and chunk ids, new vectors: a run killed halfway must not leave the old
    complete marker standing (the record count alone would still match)."""
    store = ChunkStore.open(tmp_path / "s", batch_size=2)
    doc = make_document("a", TEXT_A)
    chunks, _, _ = put(store, enc, doc)
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=4)
    from dataclasses import replace

    vectors = fake_embed_chunks(doc, chunks, "naive", enc)
    moved = [replace(v, vector=-np.asarray(v.vector)) for v in vectors]

    def die(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.upsert_document(
            doc, chunks, moved, model=enc.name, method="naive", policy=POLICY, progress=die
        )
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 4
    assert not store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=4)
    (listed,) = store.indexed_documents()
    assert not listed.complete
    store.upsert_document(doc, chunks, moved, model=enc.name, method="naive", policy=POLICY)
    assert store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY, n_chunks=4)
    recs = store.scope_records(model=enc.name, method="naive", policy=POLICY)
    assert np.allclose(recs.matrix, np.stack([v.vector for v in moved]), atol=1e-6)


def _every_policy_variant() -> list[ChunkPolicy]:
    """Every registered policy at its defaults, and with each option it takes on."""
    from dataclasses import replace

    from core.chunk import policy_registry as registry

    variants = []
    for spec in registry.all_policies():
        base = spec.default_policy()
        variants.append(base)
        variants.extend(replace(base, **{name: True}) for name in sorted(spec.options))
    return variants


def test_every_policy_and_option_is_stored_apart_and_listed_back(store, enc):
    doc = make_document("a", TEXT_A)
    variants = _every_policy_variant()
    assert len({p.key for p in variants}) == len(variants)
    for policy in variants:
        put(store, enc, doc, policy=policy)
    listed = {d.policy_key: d.policy for d in store.indexed_documents()}
    assert listed == {p.key: p for p in variants}  # each in its own collection, exactly
    for policy in variants:
        assert store.is_indexed(doc, model=enc.name, method="naive", policy=policy)
