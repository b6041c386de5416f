"""A real Chroma server (``chroma run``) on loopback, used through ``--chroma-host``.

The server is the ``chroma`` program installed with chromadb next to this interpreter;
it runs offline and answers its heartbeat within a few seconds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks, make_document, paragraph_chunks

from core.cli import main
from core.errors import StoreError
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore

pytestmark = pytest.mark.server
POLICY = ChunkPolicy(name="fixed", size=300)
START_TIMEOUT_S = 60


def _chroma_program() -> Path:
    beside = Path(sys.executable).parent / "chroma"
    found = beside if beside.exists() else shutil.which("chroma")
    if not found:
        pytest.fail("the `chroma` program is missing: it is installed with chromadb")
    return Path(found)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _heartbeat(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def serving(folder: Path, port: int):
    """``chroma run`` over ``folder/data`` on ``port``; yields the process (its log is
    shown if it fails to start) and stops it on the way out unless it is gone already."""
    log = (folder / "server.log").open("ab")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    command = [str(_chroma_program()), "run", "--path", str(folder / "data"),
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _heartbeat(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            text = (folder / "server.log").read_text(errors="replace")[-3000:]
            pytest.fail(f"chroma run did not answer its heartbeat:\n{text}")
        time.sleep(0.2)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """``HOST:PORT`` of a fresh server for the module."""
    port = _free_port()
    with serving(tmp_path_factory.mktemp("chroma-server"), port):
        yield f"127.0.0.1:{port}"


def test_store_round_trip_through_the_server(chroma_server):
    store = ChunkStore.open(host=chroma_server)
    assert store.location.is_server
    enc = FakeEncoder()
    doc = make_document(
        "srv", "\n\n".join(f"Server paragraph {i} about valve {i}" for i in range(9))
    )
    chunks = paragraph_chunks(doc, POLICY)
    vectors = fake_embed_chunks(doc, chunks, "late", enc)
    store.upsert_document(doc, chunks, vectors, model=enc.name, method="late", policy=POLICY)
    store.upsert_document(doc, chunks, vectors, model=enc.name, method="late", policy=POLICY)
    assert store.count(model=enc.name, method="late", policy=POLICY) == 9
    assert store.is_indexed(doc, model=enc.name, method="late", policy=POLICY, n_chunks=9)
    hits = store.query(vectors[4].vector, model=enc.name, method="late", policy=POLICY, k=3)
    hit = hits[0]
    assert hit.chunk_id == chunks[4].chunk_id
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    by_id = {v.chunk_id: v.vector for v in vectors}
    for other in hits[1:]:  # cosine space: 1 - distance is the cosine (not 1 - squared L2)
        expected = float(np.dot(by_id[other.chunk_id], vectors[4].vector))
        assert other.score == pytest.approx(expected, abs=1e-5) and expected < 0.999
    assert hit.citation.verify(doc).value == "ok"
    changed = make_document("srv", doc.text + "\n\nOne more paragraph.")
    assert store.records_with_other_sha("srv", changed.sha256) == 9
    new_chunks = paragraph_chunks(changed, POLICY)
    new_vectors = fake_embed_chunks(changed, new_chunks, "late", enc)
    report = store.upsert_document(
        changed, new_chunks, new_vectors, model=enc.name, method="late", policy=POLICY
    )
    assert report.deleted_other_sha == 9
    assert store.count(model=enc.name, method="late", policy=POLICY) == 10
    assert [d.sha256 for d in store.indexed_documents()] == [changed.sha256]


def test_a_stopped_server_is_a_clear_error():
    with pytest.raises(StoreError, match="chroma run"):
        ChunkStore.open(host=f"127.0.0.1:{_free_port()}")


MANUAL = """# Pump P-200

## Overheating

When the motor passes 90 degrees Celsius, the unit stops and the red lamp blinks.

## Cleaning

Rinse the intake grille every month; the unit keeps its airflow steady.

## Warranty

Parts and labour are covered for three years from the date of purchase.
"""


@pytest.mark.slow
def test_cli_index_and_query_through_the_server(chroma_server, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHUNKSCOPE_STORE", raising=False)
    manual = tmp_path / "pump.md"
    manual.write_text(MANUAL, encoding="utf-8")
    args = ["--policy", "fixed", "--size", "120", "--overlap", "0"]
    rc = main(
        [
            "index",
            str(manual),
            *args,
            "--methods",
            "naive,late",
            "--chroma-host",
            chroma_server,
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, report
    assert report["store"] == f"chroma server {chroma_server}"
    (doc,) = report["documents"]
    assert doc["indexed"] == ["naive", "late"] and doc["n_chunks"] >= 3
    rc = main(
        [
            "query",
            "what happens when the pump overheats",
            "--k",
            "2",
            "--doc",
            "pump",
            "--chroma-host",
            chroma_server,
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert set(out["results"]) == {"naive", "late"}
    for rows in out["results"].values():
        assert [r["rank"] for r in rows] == [1, 2]
        assert all(MANUAL[r["char_start"] : r["char_end"]] == r["text"] for r in rows)
    assert "90 degrees" in out["results"]["naive"][0]["text"]
    assert all(set(c["ranks"]) == {"naive", "late"} for c in out["rank_changes"])
    assert not (tmp_path / ".chunkscope").exists()


def test_a_server_lost_mid_run_stops_it_with_one_line_and_a_rerun_leaves_no_duplicates(
    tmp_path,
):
    """The server is killed between two store batches of the second of three documents:
    the run stops there (the third is never embedded for nothing), says why in one line,
    and after a restart a rerun skips the first, rewrites the second, adds the third, and
    the collection holds every chunk exactly once."""
    from core.index.indexer import default_steps, index_documents

    enc, port = FakeEncoder(), _free_port()
    texts = {f"d{d}": [f"Doc {d} paragraph {i} on gasket {i}" for i in range(7)] for d in range(3)}
    docs = [make_document(name, "\n\n".join(paras)) for name, paras in texts.items()]
    expected = {c.chunk_id for doc in docs for c in paragraph_chunks(doc, POLICY)}
    embedded = []

    def embed(doc, chunks, method, encoder, **kw):
        embedded.append(doc.doc_id)
        return fake_embed_chunks(doc, chunks, method, encoder, **kw)

    steps = dataclasses.replace(
        default_steps(embed), chunk=lambda doc, blocks, policy, enc: paragraph_chunks(doc, policy)
    )
    with serving(tmp_path, port) as proc:
        store = ChunkStore.open(host=f"127.0.0.1:{port}", batch_size=2)

        def kill_mid_store(event):
            if event.doc_id == "d1" and event.stage == "store" and event.done == 2:
                proc.kill()
                proc.wait()

        report = index_documents(
            docs, policy=POLICY, methods=("naive",), encoder=enc, store=store, steps=steps,
            progress=kill_mid_store,
        )  # fmt: skip
    assert not report.cancelled and report.halted
    assert "\n" not in report.halted and "stopped answering" in report.halted
    assert [(d.doc_id, d.indexed, bool(d.error)) for d in report.documents] == [
        ("d0", ("naive",), False),
        ("d1", (), True),
    ]
    assert embedded == ["d0", "d1"]

    with serving(tmp_path, port):
        store = ChunkStore.open(host=f"127.0.0.1:{port}", batch_size=2)
        again = index_documents(
            docs, policy=POLICY, methods=("naive",), encoder=enc, store=store, steps=steps
        )
        assert again.halted is None and not any(d.error for d in again.documents)
        assert [d.skipped for d in again.documents] == [("naive",), (), ()]
        ids, _ = store.scope_vectors(model=enc.name, method="naive", policy=POLICY)
        assert sorted(ids) == sorted(expected)  # each chunk once
        assert all(
            store.is_indexed(doc, model=enc.name, method="naive", policy=POLICY) for doc in docs
        )
