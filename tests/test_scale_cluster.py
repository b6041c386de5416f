"""The Ray pipeline on a two-node cluster (``ray.cluster_utils.Cluster``, both nodes on
this machine, one CPU each): an embed worker on the second node is killed mid-run, the
run is repeated, and the store holds every chunk exactly once, every (document, method)
complete. A run stopped by its driver (cancelled after its first stored pair), and a
driver process SIGKILLed mid-run, are finished the same way.

The killed worker is the embed actor that first embeds the late vectors of a document on
the second node: the fake embed step below SIGKILLs its own process there, once (a flag
file says it happened). Workers import this module by name (the tests folder is on
their ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PDF_DIR, ROOT, SAMPLE_DOCS
from fakes import FakeEncoder, fake_embed_chunks
from test_chroma_server import _free_port, serving

from core.index.indexer import default_steps
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore

ray = pytest.importorskip("ray", reason="Ray is the optional scale extra (requirements-dev.txt)")
cluster_utils = pytest.importorskip("ray.cluster_utils")
local_runtime_env = pytest.importorskip("core.scale.cluster").local_runtime_env

pytestmark = pytest.mark.server
POLICY = ChunkPolicy(name="fixed", unit="chars", size=400, overlap=40)
METHODS = ("naive", "late")
KILL_FLAG = "CHUNKSCOPE_TEST_KILL_FLAG"
HEAD_NODE = "CHUNKSCOPE_TEST_HEAD_NODE"
NODE_ARGS = {"num_cpus": 1, "object_store_memory": 80 * 1024**2}


def embed_or_die(doc, chunks, method, encoder, **kw):
    """``fake_embed_chunks``, except that the first late embedding on the second node
    kills its worker (SIGKILL: no cleanup, as a crash or an OOM kill)."""
    flag = Path(os.environ[KILL_FLAG])
    on_second = ray.get_runtime_context().get_node_id() != os.environ[HEAD_NODE]
    if method == "late" and on_second and not flag.exists():
        flag.write_text(f"{doc.doc_id} {os.getpid()}")
        os.kill(os.getpid(), signal.SIGKILL)
    return fake_embed_chunks(doc, chunks, method, encoder, **kw)


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    flag = tmp_path_factory.mktemp("kill") / "killed"
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={**NODE_ARGS, "include_dashboard": False}
    )
    try:
        cluster.add_node(**NODE_ARGS)
        env = local_runtime_env(str(ROOT / "tests"))
        env["env_vars"].update({KILL_FLAG: str(flag), HEAD_NODE: cluster.head_node.node_id})
        ray.init(address=cluster.address, runtime_env=env, log_to_driver=False)
        cluster.wait_for_nodes()
        yield flag, cluster.address
    finally:
        ray.shutdown()
        cluster.shutdown()
        mp.undo()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cluster-corpus")
    for name in ("pypdfsf_multicolumn.pdf", "pypdfsf_pdflatex-outline.pdf",
                 "pypdfsf_google-doc-document.pdf"):  # fmt: skip
        shutil.copy(PDF_DIR / name, folder / name)
    shutil.copy(SAMPLE_DOCS / "state_of_the_union.md", folder / "sotu.md")
    return sorted(folder.iterdir())


def job(host, embed):
    from core.scale import RayJob

    enc = FakeEncoder()
    return RayJob(policy=POLICY, model=enc.name, model_dir=str(enc.model_dir),
                  make_encoder=FakeEncoder, host=host, steps=default_steps(embed),
                  store_batch_size=4)  # fmt: skip


def expected_ids(files):
    """Chunk ids of every file as the plain steps make them (the ground truth)."""
    from core.index.indexer import DocumentFile, _chunk, _parse

    enc = FakeEncoder()
    out = set()
    for path in files:
        doc = DocumentFile(path=path).load()
        out |= {c.chunk_id for c in _chunk(doc, _parse(doc, "fast"), POLICY, enc)}
    return out


def assert_each_chunk_once(store, files):
    model = FakeEncoder().name
    want = expected_ids(files)
    for method in METHODS:
        ids, _ = store.scope_vectors(model=model, method=method, policy=POLICY)
        assert len(ids) == len(set(ids)) == len(want) and set(ids) == want, method
    complete = {(d.doc_id, d.method) for d in store.indexed_documents() if d.complete}
    assert complete == {(p.stem, m) for p in files for m in METHODS}


def test_a_worker_killed_on_the_second_node_then_a_rerun_stores_every_chunk_once(
    two_nodes, files, tmp_path
):
    from core.scale import RayOptions, index_on_ray

    port = _free_port()
    with serving(tmp_path, port):
        host = f"127.0.0.1:{port}"
        first = index_on_ray(files, job=job(host, embed_or_die), methods=METHODS,
                             options=RayOptions(workers=2))  # fmt: skip
        assert two_nodes[0].exists(), "no worker was killed on the second node"
        if first.report.halted:  # Ray gave up on the lost worker: one line, no traceback
            assert "\n" not in first.report.halted
        again = index_on_ray(files, job=job(host, fake_embed_chunks), methods=METHODS,
                             options=RayOptions(workers=2))  # fmt: skip
        assert again.report.halted is None
        assert not any(d.error for d in again.report.documents)
        assert_each_chunk_once(ChunkStore.open(host=host), files)


def test_a_run_stopped_by_its_driver_is_finished_by_a_rerun(two_nodes, files, tmp_path):
    from core.scale import RayOptions, index_on_ray

    files = files[:2]
    port = _free_port()
    with serving(tmp_path, port):
        host = f"127.0.0.1:{port}"
        stopped = index_on_ray(
            files, job=job(host, fake_embed_chunks), methods=METHODS,
            options=RayOptions(workers=2), should_cancel=lambda: True,
        )  # fmt: skip
        assert stopped.report.cancelled
        stored = sum(len(d.indexed) for d in stopped.report.documents)
        assert 1 <= stored < len(files) * len(METHODS)
        again = index_on_ray(files, job=job(host, fake_embed_chunks), methods=METHODS,
                             options=RayOptions(workers=2))  # fmt: skip
        redone = sum(len(d.indexed) for d in again.report.documents)
        skipped = sum(len(d.skipped) for d in again.report.documents)
        assert skipped >= stored and redone + skipped == len(files) * len(METHODS)
        assert_each_chunk_once(ChunkStore.open(host=host), files)


def slow_embed(doc, chunks, method, encoder, **kw):
    """``fake_embed_chunks`` taking half a second, so a driver can be killed mid-run."""
    time.sleep(0.5)
    return fake_embed_chunks(doc, chunks, method, encoder, **kw)


DRIVER = """
import sys
from pathlib import Path
import ray
import test_scale_cluster as t
from core.scale import RayOptions, index_on_ray
from core.scale.cluster import local_runtime_env
env = local_runtime_env(str(Path(t.__file__).parent))
ray.init(address=sys.argv[1], runtime_env=env, log_to_driver=False)
files = [Path(p) for p in sys.argv[3:]]
index_on_ray(files, job=t.job(sys.argv[2], t.slow_embed), methods=t.METHODS,
             options=RayOptions(workers=2))
"""


def test_a_killed_driver_is_finished_by_a_rerun(two_nodes, files, tmp_path):
    from core.scale import RayOptions, index_on_ray

    port = _free_port()
    with serving(tmp_path, port):
        host = f"127.0.0.1:{port}"
        store = ChunkStore.open(host=host)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
        cmd = [sys.executable, "-c", DRIVER, two_nodes[1], host, *map(str, files)]
        log = (tmp_path / "driver.log").open("wb")
        driver = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        complete: list = []
        while not complete and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            complete = [d for d in store.indexed_documents() if d.complete]
        driver.kill()
        driver.wait()
        log.close()
        said = (tmp_path / "driver.log").read_text(errors="replace")[-2000:]
        assert 1 <= len(complete) < len(files) * len(METHODS), f"not killed mid-run:\n{said}"
        again = index_on_ray(files, job=job(host, fake_embed_chunks), methods=METHODS,
                             options=RayOptions(workers=2))  # fmt: skip
        assert again.report.halted is None and sum(len(d.skipped) for d in again.report.documents)
        assert_each_chunk_once(store, files)
