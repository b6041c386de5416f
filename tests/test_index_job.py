"""The background indexing job: real progress counts, and a cancel that a re-run completes."""

from __future__ import annotations

import functools

from fakes import FakeEncoder, fake_embed_chunks, make_document

from core.index.background import IndexJob
from core.index.indexer import default_steps, index_documents
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore

POLICY = ChunkPolicy(name="fixed", size=120)
METHODS = ("naive", "late")


def docs():
    return [
        make_document(
            name, "\n\n".join(f"{name} paragraph {i} about item {i * 3}." for i in range(n))
        )
        for name, n in (("a", 6), ("b", 4), ("c", 5))
    ]


def recording(events: list, *, cancel_at: tuple[str, str] | None = None, job_box: list):
    """``index_documents`` on the fake encoder; records every event, and sets the job's
    cancel flag once the event ``(doc_id, stage)`` of ``cancel_at`` has been seen."""

    def index(items, *, progress, **kwargs):
        def note(event):
            events.append(event)
            progress(event)
            if cancel_at == (event.doc_id, event.stage):
                job_box[0].cancel.set()

        steps = default_steps(fake_embed_chunks)
        return index_documents(items, progress=note, steps=steps, **kwargs)

    return index


def complete(store, enc) -> set[str]:
    return {d.doc_id for d in store.indexed_documents() if d.complete and d.model == enc.name}


def test_progress_counts_reach_the_total(tmp_path):
    enc, store, events, box = FakeEncoder(), ChunkStore.open(tmp_path / "s"), [], []
    job = IndexJob(
        docs=docs(), methods=METHODS, policy=POLICY, index=recording(events, job_box=box)
    )
    box.append(job)
    assert job.progress() == (0.0, "Starting: 3 document(s)…") and not job.running
    job.start(store, enc)
    job.thread.join(60)
    assert not job.running and job.error is None
    stores = [e for e in events if e.stage == "store"]
    assert stores and all(0 < e.done <= e.total for e in stores)
    finals = {(e.doc_id, e.method): (e.done, e.total) for e in stores}
    assert len(finals) == 3 * len(METHODS) and all(d == t for d, t in finals.values())
    assert [(e.done, e.total) for e in events if e.stage == "done"] == [(1, 3), (2, 3), (3, 3)]
    share, line = job.progress()
    assert share == 1.0 and line == "Document 3 of 3 (c): done"
    level, summary = job.summary()
    assert level == "success" and summary.startswith("3 of 3 document(s) indexed (naive, late")
    assert complete(store, enc) == {"a", "b", "c"}


def test_cancel_stops_and_a_rerun_completes(tmp_path):
    enc, store, events, box = FakeEncoder(), ChunkStore.open(tmp_path / "s"), [], []
    index = recording(events, cancel_at=("b", "chunk"), job_box=box)
    job = IndexJob(docs=docs(), methods=METHODS, policy=POLICY, index=index)
    box.append(job)
    job.run(store, enc)  # in this thread: the cancel lands at a known point
    assert job.report is not None and job.report.cancelled
    level, summary = job.summary()
    assert level == "warning" and summary.startswith("Cancelled: ")
    assert "a" in complete(store, enc) and "c" not in complete(store, enc)

    again = IndexJob(docs=docs(), methods=METHODS, policy=POLICY, index=functools.partial(
        index_documents, steps=default_steps(fake_embed_chunks)
    ))  # fmt: skip
    again.start(store, enc)
    again.thread.join(60)
    assert again.summary()[0] == "success" and not again.report.cancelled
    assert complete(store, enc) == {"a", "b", "c"}
    assert next(d for d in again.report.documents if d.doc_id == "a").skipped == METHODS


def test_a_lost_store_stops_the_job_with_an_error_line(tmp_path):
    """A store that stops answering on the second document: the job ends there, red."""
    from core.errors import StoreLostError

    enc, store = FakeEncoder(), ChunkStore.open(tmp_path / "s")
    lost = "the Chroma server at 127.0.0.1:1 stopped answering (ConnectError: refused)"

    def embed(doc, chunks, method, encoder, **kw):
        if doc.doc_id == "b":
            raise StoreLostError(lost)
        return fake_embed_chunks(doc, chunks, method, encoder, **kw)

    index = functools.partial(index_documents, steps=default_steps(embed))
    job = IndexJob(docs=docs(), methods=METHODS, policy=POLICY, index=index)
    job.run(store, enc)
    assert job.report is not None and job.report.halted == lost
    assert [d.doc_id for d in job.report.documents] == ["a", "b"]  # c was never started
    level, summary = job.summary()
    assert (level, summary) == (
        "error",
        f"Stopped: 1 of 3 document(s) indexed (naive, late, policy {POLICY.key}) in "
        f"{job.report.elapsed_s:.1f} s. {lost}",
    )
    assert complete(store, enc) == {"a"}
