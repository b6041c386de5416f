"""Scale case: the Ray indexer (``core.scale``) against the plain one.

Same documents (``SCALE_PDFS`` and ``SCALE_TEXTS`` of the shared corpus), same methods,
same real model, same CPU budget: the plain indexer in this process with torch on every
usable core, Ray with one embed actor per usable core on a local cluster of that many
CPUs, started before the clock (as ``ray start --head`` would have). Each side writes to
a fresh ``chroma run`` server on loopback, so nothing is skipped; the plain side's time
includes loading the model, as the Ray actors' does. One run each (``ours`` = Ray
seconds, ``baseline`` = plain seconds): throughput >= 0.85x the plain indexer's means
a ratio <= 1/0.85.

The scaling rows (1, 2, 4 and 8 CPU workers; one GPU actor) need 9 usable cores and a
CUDA device; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core import defaults
from core.bench.inputs import BenchInputs, shared_dir
from core.bench.machine import usable_cores
from core.bench.report import CaseResult
from core.chunk import policy_from_args
from core.embed import load_encoder
from core.index.indexer import DocumentFile, index_documents
from core.methods import BENCHED
from core.scale import RayJob, RayOptions, index_on_ray
from core.scale.cluster import ClusterRequest, import_ray, start_local
from core.store import ChunkStore

SCALE_PDFS = (
    "sample-sigconf.pdf", "plumber_federal-register-2020-17221.pdf",
    "GeoBase_NHNC1_Data_Model_UML_EN.pdf", "beamerexample-conference-talk.pdf",
    "elstest-5p.pdf", "plumber_nics-background-checks-2015-11.pdf",
    "pypdfsf_google-doc-document.pdf", "pypdfsf_multicolumn.pdf",
    "pypdfsf_pdflatex-outline.pdf",
)  # fmt: skip
SCALE_TEXTS = ("chatlogs", "state_of_the_union", "wikitexts")
QUICK_PDFS = ("elstest-5p.pdf", "pypdfsf_multicolumn.pdf", "pypdfsf_pdflatex-outline.pdf")
METHODS = tuple(BENCHED)  # one of each kind of indexing cost
MIN_THROUGHPUT = 0.85
SCALING_WORKERS = (1, 2, 4, 8)
SERVER_START_S = 60


def scale_paths(quick: bool) -> list[Path]:
    corpus = shared_dir() / "corpus"
    pdfs = [corpus / "pdfs" / n for n in (QUICK_PDFS if quick else SCALE_PDFS)]
    texts = [] if quick else [corpus / "chunking_evaluation" / "corpora" / f"{n}.md"
                              for n in SCALE_TEXTS]  # fmt: skip
    return [*pdfs, *texts]


def _heartbeat(port: int) -> bool:
    try:
        url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def chroma_server() -> Iterator[str]:
    """A fresh ``chroma run`` on a free loopback port over a temporary folder: HOST:PORT."""
    program = Path(sys.executable).parent / "chroma"
    found = str(program) if program.exists() else shutil.which("chroma")
    if not found:
        raise RuntimeError("the `chroma` program (installed with chromadb) is missing")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="cs-bench-scale-") as folder:
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
        cmd = [found, "run", "--path", folder, "--host", "127.0.0.1", "--port", str(port)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            deadline = time.monotonic() + SERVER_START_S
            while not _heartbeat(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chroma run did not answer its heartbeat")
                time.sleep(0.2)
            yield f"127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _plain(files: list[Path], policy: Any) -> tuple[float, int]:
    """Seconds (model load included) and chunk tokens embedded, once per dense method."""
    with chroma_server() as host:
        store = ChunkStore.open(host=host)
        started = time.perf_counter()
        encoder = load_encoder(device="cpu")
        report = index_documents([DocumentFile(path=p) for p in files], policy=policy,
                                 methods=METHODS, encoder=encoder, store=store)  # fmt: skip
        elapsed = time.perf_counter() - started
    if any(d.error for d in report.documents):
        raise RuntimeError(next(d.error for d in report.documents if d.error))
    return elapsed, sum(d.n_chunks or 0 for d in report.documents)


def _ray(files: list[Path], policy: Any, workers: int, gpus: float, device: str) -> Any:
    """``(seconds, RayIndexReport)`` of one run on the Ray already started."""
    encoder = load_encoder(device="cpu")
    with chroma_server() as host:
        load = functools.partial(load_encoder, device=device)
        job = RayJob(policy=policy, model=encoder.name, model_dir=str(encoder.model_dir),
                     make_encoder=load, host=host)  # fmt: skip
        started = time.perf_counter()
        run = index_on_ray(files, job=job, methods=METHODS,
                           options=RayOptions(workers=workers, gpus_per_worker=gpus))  # fmt: skip
        elapsed = time.perf_counter() - started
    if run.report.halted or any(d.error for d in run.report.documents):
        raise RuntimeError(run.report.halted or "a document failed under Ray")
    return elapsed, run


def _per_worker(run: Any) -> float:
    return next(s.tokens_per_worker_s for s in run.stages if s.stage == "embed")


def scale_cases(inputs: BenchInputs) -> list[CaseResult]:
    """The overhead row, then the scaling rows (run or skipped)."""
    try:
        ray = import_ray()
    except Exception as exc:  # Ray is an optional extra
        return [CaseResult(key="scale:skipped", case="scale", label="scale (skipped)",
                           skipped=str(exc))]  # fmt: skip

    policy = policy_from_args(defaults.POLICY, None, None, None)  # the index command's default
    files = scale_paths(inputs.settings.quick)
    cores = usable_cores()
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    plain_s, _ = _plain(files, policy)
    started = time.perf_counter()
    start_local(ClusterRequest(cpus=cores, gpus=gpus))
    cluster_s = time.perf_counter() - started
    try:
        ray_s, run = _ray(files, policy, cores, 0.0, "cpu")
        rows = [_overhead_row(len(files), cores, plain_s, ray_s, run, cluster_s)]
        rows += _scaling_rows(files, policy, cores, gpus)
    finally:
        ray.shutdown()
    return rows


def _overhead_row(n_files: int, cores: int, plain_s: float, ray_s: float, run: Any,
                  cluster_s: float) -> CaseResult:  # fmt: skip
    tokens = run.embedded_tokens
    return CaseResult(
        key="scale:overhead",
        case="scale",
        label=f"ray index {n_files} docs, {cores} CPU workers",
        ours=ray_s,
        baseline=plain_s,
        baseline_label=f"plain indexer, torch on {cores} cores",
        max_ratio=round(1 / MIN_THROUGHPUT, 3),
        target=f"throughput >= {MIN_THROUGHPUT}x plain",
        notes=(
            f"{_per_worker(run):,.0f} tokens/s per embed worker; {tokens / ray_s:,.0f} tokens/s "
            f"for the run against {tokens / plain_s:,.0f} plain",
            f"local cluster start {cluster_s:.1f} s, not counted (a `ray start` cluster is up)",
            *run.summary_lines(),
        ),
        extra={"ray": run.to_dict(), "methods": list(METHODS), "cluster_start_s": cluster_s},
    )


def _scaling_rows(files: list[Path], policy: Any, cores: int, gpus: int) -> list[CaseResult]:
    rows = []
    for workers in SCALING_WORKERS:
        label = f"ray scaling, {workers} CPU worker(s)"
        if cores < max(SCALING_WORKERS) + 1:
            why = f"needs {max(SCALING_WORKERS) + 1} usable cores, this machine has {cores}"
            rows.append(CaseResult(key=f"scale:cpu{workers}", case="scale", label=label,
                                   skipped=why))  # fmt: skip
            continue
        seconds, run = _ray(files, policy, workers, 0.0, "cpu")
        rows.append(_scaling_row(f"scale:cpu{workers}", label, seconds, run))
    label = "ray scaling, 1 GPU actor (bf16)"
    if not gpus:
        rows.append(CaseResult(key="scale:gpu1", case="scale", label=label,
                               skipped="no CUDA device on this machine"))  # fmt: skip
    else:
        seconds, run = _ray(files, policy, 1, 1.0, "cuda")
        rows.append(_scaling_row("scale:gpu1", label, seconds, run))
    return rows


def _scaling_row(key: str, label: str, seconds: float, run: Any) -> CaseResult:
    rate = run.embedded_tokens / seconds
    return CaseResult(
        key=key, case="scale", label=label, ours=seconds,
        notes=(f"{rate:,.0f} tokens/s for the run, {_per_worker(run):,.0f} per worker",),
        extra={"ray": run.to_dict(), "tokens_per_s": rate},
    )  # fmt: skip
