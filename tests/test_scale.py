"""The Ray index pipeline (``core.scale``) on a local Ray cluster, writing to a Chroma
server on loopback: its records equal the plain indexer's, a bad file is one line, a
rerun skips everything, lexical methods are queryable after it.

The cluster has explicit small resources (2 CPUs, a 100 MiB object store), no dashboard
and no usage statistics, and is shut down after the module. Its workers get the driver's
``sys.path``, so they import this worktree's ``core`` and the test helpers in ``fakes``.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import PDF_DIR, ROOT, SAMPLE_DOCS
from fakes import FakeEncoder, fake_embed_chunks
from test_chroma_server import _free_port, serving

from core.index.indexer import DocumentFile, default_steps, index_documents
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore

local_runtime_env = pytest.importorskip("core.scale.cluster").local_runtime_env

ray = pytest.importorskip("ray", reason="Ray is the optional scale extra (requirements-dev.txt)")

pytestmark = pytest.mark.server
POLICY = ChunkPolicy(name="structure", unit="tokens", size=120, overlap=12)
METHODS = ("naive", "late", "bm25")
PDFS = (
    "pypdfsf_multicolumn.pdf",
    "pypdfsf_pdflatex-outline.pdf",
    "pypdfsf_google-doc-document.pdf",
)


@pytest.fixture(scope="module")
def local_ray():
    """A local cluster of 2 CPUs for the module (``core.scale`` uses it as it is)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        num_cpus=2,
        num_gpus=0,
        include_dashboard=False,
        object_store_memory=100 * 1024**2,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        runtime_env=local_runtime_env(str(ROOT / "tests")),
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        mp.undo()


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    port = _free_port()
    with serving(tmp_path_factory.mktemp("scale-server"), port):
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Three shared PDFs, a sample Markdown file and one file that is not a PDF."""
    folder = tmp_path_factory.mktemp("scale-corpus")
    for name in PDFS:
        shutil.copy(PDF_DIR / name, folder / name)
    shutil.copy(PDF_DIR / "ocrmypdf_invalid.pdf", folder / "broken.pdf")
    shutil.copy(SAMPLE_DOCS / "state_of_the_union.md", folder / "state_of_the_union.md")
    return sorted(folder.iterdir())


def fake_steps():
    return default_steps(fake_embed_chunks)


def ray_job(host, **kw):
    from core.scale import RayJob

    enc = FakeEncoder()
    return RayJob(policy=POLICY, model=enc.name, model_dir=str(enc.model_dir),
                  make_encoder=FakeEncoder, host=host, steps=fake_steps(), **kw)  # fmt: skip


def assert_same_records(ray_store, plain_store, model, methods=METHODS, atol=1e-6):
    for method in methods:
        got = ray_store.scope_records(model=model, method=method, policy=POLICY)
        want = plain_store.scope_records(model=model, method=method, policy=POLICY)
        assert got.ids == want.ids and len(got.ids) > 0, method
        assert got.texts == want.texts
        assert got.metadatas == want.metadatas
        np.testing.assert_allclose(got.matrix, want.matrix, atol=atol)


def test_ray_records_equal_the_plain_indexers_and_a_rerun_skips(
    local_ray, chroma_server, corpus, tmp_path
):
    from core.scale import RayOptions, index_on_ray

    events = []
    run = index_on_ray(corpus, job=ray_job(chroma_server), methods=METHODS,
                       options=RayOptions(workers=2), progress=events.append)  # fmt: skip
    report = run.report
    assert not report.cancelled and report.halted is None
    assert [d.source for d in report.documents] == [str(p) for p in corpus]  # input order
    by_id = {d.doc_id: d for d in report.documents}
    assert len(by_id) == len(corpus)
    broken = by_id["broken"]
    assert broken.error and "\n" not in broken.error and not broken.indexed
    good = [d for d in report.documents if d.doc_id != "broken"]
    assert all(sorted(d.indexed) == sorted(METHODS) and d.n_chunks for d in good), good
    done = [e.done for e in events]
    assert done == sorted(set(done)) and done[-1] == events[-1].total == len(corpus) * 3
    embed = next(s for s in run.stages if s.stage == "embed")
    assert embed.items == len(good) * len(METHODS) and embed.tokens_per_worker_s > 0
    assert any("tokens/s per worker" in line for line in run.summary_lines())

    plain = ChunkStore.open(tmp_path / "plain")
    enc = FakeEncoder()
    plain_report = index_documents(
        [DocumentFile(path=p) for p in corpus], policy=POLICY, methods=METHODS,
        encoder=enc, store=plain, steps=fake_steps(),
    )  # fmt: skip
    assert {d.doc_id: d.n_chunks for d in plain_report.documents} == {
        d.doc_id: d.n_chunks for d in report.documents
    }
    server = ChunkStore.open(host=chroma_server)
    assert_same_records(server, plain, enc.name)

    from core.store.lexical_index import lexical_collection

    lexical = lexical_collection(server, model=enc.name, method="bm25", policy=POLICY)
    assert lexical is not None

    stored = [p for p in corpus if p.name != "broken.pdf"]
    again = index_on_ray(stored, job=ray_job(chroma_server), methods=METHODS,
                         options=RayOptions(workers=1))  # fmt: skip
    assert [d.skipped for d in again.report.documents] == [METHODS] * len(stored)
    assert again.pipeline_s == 0 and again.stages[1].items == 0  # decided on the driver
    assert_same_records(server, plain, enc.name)


def test_a_forced_rerun_rewrites_without_duplicates(local_ray, chroma_server, corpus):
    from core.scale import RayOptions, index_on_ray

    files = [p for p in corpus if p.suffix == ".md"]
    enc = FakeEncoder()
    job = ray_job(chroma_server, store_batch_size=3)  # several write batches a document
    index_on_ray(files, job=job, methods=("naive",), options=RayOptions())
    forced = index_on_ray(files, job=job, methods=("naive",), options=RayOptions(), force=True)
    assert [d.indexed for d in forced.report.documents] == [("naive",)]
    server = ChunkStore.open(host=chroma_server)
    recs = server.scope_records(model=enc.name, method="naive", policy=POLICY)
    (doc,) = forced.report.documents
    ids = [i for i, m in zip(recs.ids, recs.metadatas, strict=True) if m["doc_id"] == doc.doc_id]
    assert len(ids) == len(set(ids)) == doc.n_chunks > 3


def test_more_workers_than_the_cluster_holds_is_one_line(local_ray, chroma_server, corpus):
    from core.errors import ChunkscopeError
    from core.scale import RayOptions, index_on_ray

    files = [p for p in corpus if p.name == "broken.pdf"]  # never stored: always planned
    with pytest.raises(ChunkscopeError, match="--workers 3 needs 3 CPUs, the Ray cluster has 2"):
        index_on_ray(files, job=ray_job(chroma_server), methods=("naive",),
                     options=RayOptions(workers=3))  # fmt: skip
    with pytest.raises(ChunkscopeError, match="needs 1 GPUs, the Ray cluster has 0"):
        index_on_ray(files, job=ray_job(chroma_server), methods=("naive",),
                     options=RayOptions(gpus_per_worker=1))  # fmt: skip


def test_a_missing_server_is_one_line(local_ray, corpus):
    from core.errors import StoreError
    from core.scale import RayOptions, index_on_ray

    with pytest.raises(StoreError, match="chroma run"):
        index_on_ray(corpus, job=ray_job(f"127.0.0.1:{_free_port()}"), methods=("naive",),
                     options=RayOptions())  # fmt: skip


def test_ray_options_need_the_ray_engine_and_a_server(capsys, tmp_path):
    from core.cli import main

    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nOne paragraph.\n", encoding="utf-8")
    assert main(["index", str(doc), "--workers", "2", "--store", str(tmp_path / "s")]) == 2
    assert "error: --workers needs --engine ray" in capsys.readouterr().err
    assert main(["index", str(doc), "--engine", "ray", "--workers", "0"]) == 2
    assert "error: --workers must be at least 1" in capsys.readouterr().err
    rc = main(["index", str(doc), "--engine", "ray", "--store", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--chroma-host, not --store" in err


def test_the_plain_cli_never_imports_ray(tmp_path):
    import subprocess
    import sys

    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nOne paragraph.\n", encoding="utf-8")
    code = (
        "import sys; from core.cli import main; "
        f"rc = main(['chunk', {str(doc)!r}, '--policy', 'fixed']); "
        "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_cli_ray_run_with_the_real_model_equals_the_plain_run(
    local_ray, chroma_server, tmp_path, capsys
):
    """The real encoder in a Ray actor gives the plain indexer's vectors (float tolerance)."""
    import json

    from core.cli import main

    pdf = tmp_path / "outline.pdf"
    shutil.copy(PDF_DIR / "pypdfsf_pdflatex-outline.pdf", pdf)
    common = ["--policy", "structure", "--methods", "naive,late", "--json"]
    rc = main(["index", str(pdf), *common, "--engine", "ray", "--chroma-host", chroma_server])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, out
    assert out["documents"][0]["indexed"] == ["naive", "late"]
    assert [s["stage"] for s in out["ray"]["stages"]] == ["parse", "embed", "store"]
    assert main(["index", str(pdf), *common, "--store", str(tmp_path / "plain")]) == 0
    model = json.loads(capsys.readouterr().out)["model"]
    server, plain = ChunkStore.open(host=chroma_server), ChunkStore.open(tmp_path / "plain")
    policy = ChunkPolicy.from_dict(out["policy"])
    for method in ("naive", "late"):
        got = server.scope_records(model=model, method=method, policy=policy)
        want = plain.scope_records(model=model, method=method, policy=policy)
        assert got.ids == want.ids and got.metadatas == want.metadatas and got.ids
        np.testing.assert_allclose(got.matrix, want.matrix, atol=1e-5)
