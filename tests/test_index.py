"""The indexing pipeline: every method stored once per chunk, skips, replacement, cancel, kill."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import PDF_DIR, text_corpora
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks

from core.errors import ChunkscopeError, PoolingError, UnsupportedFileError
from core.formats import load_document
from core.index.indexer import (
    DocumentFile,
    IndexSteps,
    collect_files,
    default_steps,
    index_documents,
)
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "index_worker.py"
POLICY = ChunkPolicy(name="fixed", size=300)
METHODS = ("naive", "late", "contextual")


class CountingSteps:
    """Paragraph chunks without a parser; counts the calls of each stage."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.fail_on = fail_on

    def steps(self) -> IndexSteps:
        return IndexSteps(parse=self.parse, chunk=self.chunk, embed=self.embed)

    def parse(self, doc, parser):
        self.calls["parse"] += 1
        if doc.doc_id == self.fail_on:
            raise ChunkscopeError(f"{doc.doc_id} cannot be parsed")
        return []

    def chunk(self, doc, blocks, policy, encoder):
        self.calls["chunk"] += 1
        return paragraph_chunks(doc, policy)

    def embed(self, doc, chunks, method, encoder, **kw):
        self.calls[f"embed:{method}"] += 1
        return fake_embed_chunks(doc, chunks, method, encoder, **kw)


def docs_abc():
    return [
        make_document(name, "\n\n".join(f"{name} paragraph {i} on item {i * 7}" for i in range(n)))
        for name, n in (("a", 5), ("b", 3), ("c", 7))
    ]


@pytest.fixture()
def store(tmp_path):
    return ChunkStore.open(tmp_path / "store", batch_size=2)


def counts(store, enc, policy=POLICY):
    return {m: store.count(model=enc.name, method=m, policy=policy) for m in METHODS}


def test_index_stores_every_chunk_once_per_method(store):
    enc, fake, events = FakeEncoder(), CountingSteps(), []
    report = index_documents(
        docs_abc(),
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        progress=events.append,
        steps=fake.steps(),
    )
    assert not report.cancelled and report.model == enc.name
    assert [(d.doc_id, d.n_chunks, d.indexed) for d in report.documents] == [
        ("a", 5, METHODS),
        ("b", 3, METHODS),
        ("c", 7, METHODS),
    ]
    assert counts(store, enc) == {m: 15 for m in METHODS}
    assert fake.calls["parse"] == 3 and fake.calls["embed:late"] == 3
    stores = [e for e in events if e.stage == "store" and e.doc_id == "c" and e.method == "late"]
    assert [(e.done, e.total) for e in stores] == [(2, 7), (4, 7), (6, 7), (7, 7)]
    embeds = [e for e in events if e.stage == "embed" and e.doc_id == "a" and e.method == "naive"]
    assert embeds[-1].done == embeds[-1].total == 5
    done = [(e.done, e.total) for e in events if e.stage == "done"]
    assert done == [(1, 3), (2, 3), (3, 3)]
    assert {e.doc_index for e in events if e.doc_id == "b"} == {1}


def test_second_run_skips_without_parsing_or_embedding(store):
    enc = FakeEncoder()
    index_documents(
        docs_abc(),
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        steps=CountingSteps().steps(),
    )
    fake, before = CountingSteps(), enc.encoded
    report = index_documents(
        docs_abc(), policy=POLICY, methods=METHODS, encoder=enc, store=store, steps=fake.steps()
    )
    assert all(d.skipped == METHODS and not d.indexed for d in report.documents)
    assert fake.calls == Counter() and enc.encoded == before
    forced = index_documents(
        docs_abc()[:1],
        policy=POLICY,
        methods=["late"],
        encoder=enc,
        store=store,
        steps=fake.steps(),
        force=True,
    )
    assert forced.documents[0].indexed == ("late",)
    assert counts(store, enc) == {m: 15 for m in METHODS}


def test_new_method_only_embeds_that_method(store):
    enc, fake = FakeEncoder(), CountingSteps()
    index_documents(
        docs_abc(), policy=POLICY, methods=["naive"], encoder=enc, store=store, steps=fake.steps()
    )
    report = index_documents(
        docs_abc(),
        policy=POLICY,
        methods=["naive", "late"],
        encoder=enc,
        store=store,
        steps=fake.steps(),
    )
    assert all(d.indexed == ("late",) and d.skipped == ("naive",) for d in report.documents)
    assert fake.calls["embed:naive"] == 3 and fake.calls["embed:late"] == 3


def test_changed_document_is_reindexed_and_replaced(store):
    enc = FakeEncoder()
    docs = docs_abc()
    index_documents(
        docs,
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        steps=CountingSteps().steps(),
    )
    changed = make_document("b", docs[1].text + "\n\nb gains a fourth paragraph")
    assert store.records_with_other_sha("b", changed.sha256) == 9
    report = index_documents(
        [changed],
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        steps=CountingSteps().steps(),
    )
    assert report.documents[0].indexed == METHODS
    assert store.records_with_other_sha("b", changed.sha256) == 0
    assert counts(store, enc) == {m: 16 for m in METHODS}
    versions = {(d.doc_id, d.sha256) for d in store.indexed_documents()}
    assert ("b", docs[1].sha256) not in versions and ("b", changed.sha256) in versions


def test_a_failing_document_is_reported_and_the_rest_indexed(store):
    enc = FakeEncoder()
    report = index_documents(
        docs_abc(),
        policy=POLICY,
        methods=["naive"],
        encoder=enc,
        store=store,
        steps=CountingSteps(fail_on="b").steps(),
    )
    by_id = {d.doc_id: d for d in report.documents}
    assert by_id["b"].error == "b cannot be parsed" and by_id["b"].indexed == ()
    assert by_id["a"].indexed == by_id["c"].indexed == ("naive",)
    assert store.count(model=enc.name, method="naive", policy=POLICY) == 12


@pytest.mark.parametrize("stop_after", [1, 4, 9, 17])
def test_cancel_stops_cleanly_and_a_rerun_completes(store, stop_after):
    enc, seen = FakeEncoder(), []

    def should_cancel():
        return len(seen) >= stop_after

    report = index_documents(
        docs_abc(),
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        progress=seen.append,
        should_cancel=should_cancel,
        steps=CountingSteps().steps(),
    )
    assert report.cancelled
    assert sum(counts(store, enc).values()) < 45
    again = index_documents(
        docs_abc(),
        policy=POLICY,
        methods=METHODS,
        encoder=enc,
        store=store,
        steps=CountingSteps().steps(),
    )
    assert not again.cancelled
    assert counts(store, enc) == {m: 15 for m in METHODS}
    assert all(d.complete for d in store.indexed_documents())


def test_late_on_a_cls_model_is_refused_before_any_work(store):
    fake = CountingSteps()
    with pytest.raises(PoolingError, match="mean-pooled"):
        index_documents(
            docs_abc(),
            policy=POLICY,
            methods=["naive", "late"],
            encoder=FakeEncoder(pooling="cls"),
            store=store,
            steps=fake.steps(),
        )
    assert fake.calls == Counter() and store.indexed_documents() == []


def test_methods_must_be_distinct(store):
    with pytest.raises(ValueError):
        index_documents(
            docs_abc(),
            policy=POLICY,
            methods=["naive", "naive"],
            encoder=FakeEncoder(),
            store=store,
        )


def check_store_matches(store_dir: Path, files: list[Path]) -> int:
    """Every chunk of every file is stored exactly once per method, consistent with its
    document; returns the number of chunks per method."""
    enc = FakeEncoder()
    store = ChunkStore.open(store_dir)
    steps = default_steps(embed=fake_embed_chunks)
    policy = ChunkPolicy(name="fixed", size=600, overlap=50)
    total = 0
    for path in files:
        doc = load_document(path)
        chunks = steps.chunk(doc, steps.parse(doc, "fast"), policy, enc)
        total += len(chunks)
        for method in METHODS:
            assert store.is_indexed(
                doc, model=enc.name, method=method, policy=policy, n_chunks=len(chunks)
            )
            recs = store.scope_records(
                model=enc.name, method=method, policy=policy, doc_id=doc.doc_id
            )
            assert list(recs.ids) == [c.chunk_id for c in chunks]
            for meta, text, chunk in zip(recs.metadatas, recs.texts, chunks, strict=True):
                assert meta["doc_sha256"] == doc.sha256 and meta["method"] == method
                assert doc.text[meta["char_start"] : meta["char_end"]] == text == chunk.text
    for method in METHODS:
        assert store.count(model=enc.name, method=method, policy=policy) == total
    return total


def forget_open_stores() -> None:
    """Drop this process's cached Chroma clients, so the next open reads the folder anew."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def run_worker(store_dir: Path, kill_after: int, files: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(WORKER), str(store_dir), str(kill_after), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


@pytest.mark.parametrize(("kill_after", "to_redo"), [(3, 6), (11, 3)])
def test_killed_run_then_rerun_ends_with_exact_records(tmp_path, kill_after, to_redo):
    """Batch 3 dies inside the first document; batch 11 right after the last batch of the
    second document's first method, before its completion marker."""
    excerpt = tmp_path / "chatlogs-excerpt.md"
    excerpt.write_text(text_corpora()[0].read_text(encoding="utf-8")[:10_000], encoding="utf-8")
    files = [excerpt, PDF_DIR / "pypdfsf_multicolumn.pdf"]
    store_dir = tmp_path / "store"
    killed = run_worker(store_dir, kill_after, files)
    assert killed.returncode == 17, killed.stderr[-2000:]
    partial = ChunkStore.open(store_dir).indexed_documents()
    assert [d.complete for d in partial].count(False) == 1
    forget_open_stores()
    finished = run_worker(store_dir, 0, files)
    assert finished.returncode == 0, finished.stderr[-2000:]
    summary = json.loads(finished.stdout.strip().splitlines()[-1])
    redone = [m for _, indexed, _ in summary["documents"].values() for m in indexed]
    assert len(redone) == to_redo, summary
    assert check_store_matches(store_dir, files) > 20


def test_collect_files(tmp_path):
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "a" / ".chunkscope").mkdir()
    for name in (
        "a/x.PDF",
        "a/deep/y.md",
        "a/z.txt",
        "a/notes.markdown",
        "a/w.csv",
        "a/.chunkscope/s.md",
        "b.md",
    ):
        (tmp_path / name).write_text("x", encoding="utf-8")
    found = collect_files([tmp_path / "b.md", tmp_path / "a", tmp_path / "b.md"])
    rel = [p.relative_to(tmp_path).as_posix() for p in found]
    assert rel == ["b.md", "a/deep/y.md", "a/notes.markdown", "a/x.PDF", "a/z.txt"]
    with pytest.raises(UnsupportedFileError, match="does not exist"):
        collect_files([tmp_path / "missing.pdf"])


def test_document_files_are_loaded_only_when_needed(store, tmp_path, monkeypatch):
    for name, text in (("one.md", "# One\n\nFirst file."), ("two.txt", "Second file.")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    items = [DocumentFile(path=tmp_path / n) for n in ("one.md", "two.txt", "empty.txt")]
    enc, steps = FakeEncoder(), default_steps(embed=fake_embed_chunks)
    report = index_documents(
        items, policy=POLICY, methods=["naive"], encoder=enc, store=store, steps=steps
    )
    one, two, empty = report.documents
    loaded = load_document(tmp_path / "one.md")
    assert (one.doc_id, one.sha256, one.indexed) == (loaded.doc_id, loaded.sha256, ("naive",))
    assert two.doc_id == "two" and two.indexed == ("naive",)
    assert empty.doc_id == "empty" and empty.error.startswith("empty.txt is empty")

    def must_not_load(self):
        raise AssertionError(f"{self.path} was loaded although it is stored")

    monkeypatch.setattr(DocumentFile, "load", must_not_load)
    again = index_documents(
        items[:2], policy=POLICY, methods=["naive"], encoder=enc, store=store, steps=steps
    )
    assert [d.skipped for d in again.documents] == [("naive",), ("naive",)]
