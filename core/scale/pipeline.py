"""``index_on_ray``: the index run as a Ray Data pipeline writing to a Chroma server.

    files (driver: identity, skip, refuse) -> parse + chunk (CPU tasks)
          -> embed per method (actors holding the model; one per GPU when there are GPUs)
          -> write (an actor with one server connection) -> the driver's counts

Records are those of the plain indexer: the same steps make them (``core.index.indexer``) and
the same ``upsert_document`` stores them, so chunk ids, spans and metadata are equal and
vectors equal to float tolerance (bf16 on a GPU: about 1e-2). Each (document, method) gets
its completion marker after its last batch, so a run that loses a worker (Ray retries the
task or restarts the actor) or its driver is finished by running it again, and the store
holds every chunk once. At the end the driver rebuilds the term index of each lexical
method written to. Resources: an embed actor reserves one CPU (or ``gpus_per_worker``
GPUs); parse tasks and the writer reserve none (their number is bounded instead), so the
actors can never starve them.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import methods as registry
from core.errors import ChunkscopeError
from core.formats import doc_id_for
from core.index.indexer import DocIndexResult, IndexProgress, IndexReport
from core.scale.cluster import ClusterRequest, import_ray, ray_cluster
from core.scale.plan import plan_run
from core.scale.stage_report import RayIndexReport, stage_stats
from core.scale.stages import Embedder, RayJob, Writer, parse_row
from core.store import ChunkStore
from core.store.lexical_index import lexical_collection


@dataclass(frozen=True, slots=True, kw_only=True)
class RayOptions:
    """``workers`` embed actors (each one CPU, or ``gpus_per_worker`` GPUs); at most
    ``parse_tasks`` parse tasks at once (None: as many as workers); ``writers`` actors
    writing to the server. ``address`` joins a running cluster (else a local one with
    ``workers`` CPUs, and ``ceil(workers * gpus_per_worker)`` GPUs, is started)."""

    address: str | None = None
    workers: int = 1
    gpus_per_worker: float = 0.0
    parse_tasks: int | None = None
    writers: int = 1

    def cluster(self) -> ClusterRequest:
        gpus = -(-int(self.workers * self.gpus_per_worker * 1000) // 1000)
        return ClusterRequest(address=self.address, cpus=self.workers, gpus=gpus)


def check_resources(resources: dict[str, float], opts: RayOptions) -> None:
    """Refuse a run whose actors the cluster cannot hold (they would wait forever)."""
    want_gpus = opts.workers * opts.gpus_per_worker
    have_cpus, have_gpus = resources.get("CPU", 0.0), resources.get("GPU", 0.0)
    if have_cpus < opts.workers:
        raise ChunkscopeError(
            f"--workers {opts.workers} needs {opts.workers} CPUs, the Ray cluster has "
            f"{have_cpus:g}: lower --workers or add nodes (`ray start --address ...`)"
        )
    if have_gpus + 1e-9 < want_gpus:
        raise ChunkscopeError(
            f"--workers {opts.workers} x --gpus-per-worker {opts.gpus_per_worker:g} needs "
            f"{want_gpus:g} GPUs, the Ray cluster has {have_gpus:g}"
        )


def _local_gpus_exist(opts: RayOptions) -> None:
    """A local cluster would claim GPUs this machine lacks: refuse before starting it."""
    if opts.address or os.environ.get("RAY_ADDRESS") or opts.gpus_per_worker <= 0:
        return
    import torch

    found = torch.cuda.device_count() if torch.cuda.is_available() else 0
    check_resources({"CPU": float(opts.workers), "GPU": float(found)}, opts)


def _quiet_ray_data(ray: Any) -> None:
    """The driver prints its own counts: no Ray Data bars or per-operator log lines."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def build_dataset(ray: Any, rows: Sequence[dict[str, Any]], job: RayJob, opts: RayOptions) -> Any:
    """The lazy dataset whose rows are the written (document, method) pairs."""
    ds = ray.data.from_items(list(rows), override_num_blocks=max(1, len(rows)))
    pool = ray.data.ActorPoolStrategy
    ds = ds.map(
        functools.partial(parse_row, job=job),
        num_cpus=0,
        compute=ray.data.TaskPoolStrategy(size=opts.parse_tasks or opts.workers),
    )
    gpu = opts.gpus_per_worker > 0
    ds = ds.flat_map(
        Embedder,
        fn_constructor_kwargs={"job": job},
        compute=pool(size=opts.workers),
        num_cpus=1,
        num_gpus=opts.gpus_per_worker if gpu else None,
    )
    return ds.map(
        Writer, fn_constructor_kwargs={"job": job}, compute=pool(size=opts.writers), num_cpus=0
    )


def _results(
    plan_settled: Sequence[DocIndexResult], rows: list[dict[str, Any]]
) -> list[DocIndexResult]:
    """One result per document: the settled ones, then the Ray rows merged per document."""
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        m = merged.setdefault(row["doc_id"], {"row": row, "indexed": [], "truncated": {},
                                              "errors": [], "seconds": row["parse_s"]})  # fmt: skip
        if row["error"]:
            m["errors"].append(row["error"])
        elif row["method"]:
            m["indexed"].append(row["method"])
            m["truncated"][row["method"]] = int(row["truncated"])
        m["seconds"] += row.get("embed_s", 0.0) + row.get("store_s", 0.0)
    out = list(plan_settled)
    for doc_id, m in merged.items():
        row = m["row"]
        out.append(
            DocIndexResult(
                doc_id=doc_id,
                source=row["source"],
                sha256=row["sha256"],
                n_chunks=None if row["n_chunks"] < 0 else int(row["n_chunks"]),
                indexed=tuple(m["indexed"]),
                skipped=tuple(row["skipped"]),
                truncated_chunks=m["truncated"],
                error=m["errors"][0] if m["errors"] else None,
                elapsed_s=m["seconds"],
            )
        )
    return out


def _refresh_lexical(host: str, job: RayJob, written: set[str], methods: Sequence[str]) -> None:
    store = ChunkStore.open(host=host)
    for method in methods:
        if method in written and registry.get(method).family == "lexical":
            lexical_collection(store, model=job.model, method=method, policy=job.policy)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _one_line(exc: BaseException) -> str:
    """The failure a worker raised (a task error's cause), on one line, colours dropped."""
    cause = getattr(exc, "cause", None) or exc
    text = _ANSI.sub("", str(cause)).strip()
    first = text.splitlines()[-1] if text else ""
    return f"{type(cause).__name__}: {first[:300]}" if first else type(cause).__name__


def _drain(
    ds: Any,
    n_pairs: int,
    n_docs: int,
    progress: Callable[[IndexProgress], None] | None,
    should_cancel: Callable[[], bool] | None,
) -> tuple[list[dict[str, Any]], bool, str | None]:
    """Every written row, with whether the run was cancelled and why it halted.

    ``progress`` gets a ``store`` event per row: ``done``/``total`` count (document,
    method) pairs settled, over the whole run."""
    ray = import_ray()
    rows: list[dict[str, Any]] = []
    done = 0  # (document, method) pairs: a file that failed before embedding settles all its own
    stream = iter(ds.iter_rows())
    try:
        for row in stream:
            rows.append(dict(row))
            done += 1 if row["method"] else len(row["methods"])
            if progress is not None:
                event = IndexProgress(
                    stage="store", doc_id=row["doc_id"], method=row["method"] or None,
                    done=done, total=n_pairs, doc_index=0, n_docs=n_docs,
                )  # fmt: skip
                progress(event)
            if row.get("halted"):
                return rows, False, row["error"]
            if should_cancel is not None and should_cancel():
                return rows, True, None
    except ray.exceptions.RayError as exc:
        return rows, False, f"the Ray run failed ({_one_line(exc)}); run again to finish"
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # stops the executor: nothing more is embedded or written
    return rows, False, None


def index_on_ray(
    files: Sequence[Path],
    *,
    job: RayJob,
    methods: Sequence[str],
    options: RayOptions,
    force: bool = False,
    progress: Callable[[IndexProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> RayIndexReport:
    """Index ``files`` under ``methods`` (a fusion's parts already resolved) into the
    server ``job.host``; see the module docstring."""
    started = time.perf_counter()
    store = ChunkStore.open(host=job.host)
    plan = plan_run(files, store=store, model=job.model, methods=methods, policy=job.policy,
                    password=job.password, force=force)  # fmt: skip
    n_pairs = sum(len(r["methods"]) for r in plan.rows)
    rows: list[dict[str, Any]] = []
    cancelled, halted, resources = False, None, {}
    ray_s = 0.0
    if plan.rows:
        _local_gpus_exist(options)
        with ray_cluster(options.cluster()) as resources:
            check_resources(resources, options)
            ray = import_ray()
            _quiet_ray_data(ray)
            ray_started = time.perf_counter()
            ds = build_dataset(ray, plan.rows, job, options)
            rows, cancelled, halted = _drain(ds, n_pairs, len(files), progress, should_cancel)
            ray_s = time.perf_counter() - ray_started
    written = {r["method"] for r in rows if r["method"] and not r["error"]}
    if not halted:
        _refresh_lexical(job.host, job, written, methods)

    order = {doc_id_for(p.name): i for i, p in enumerate(files)}  # the plain run's order
    documents = sorted(_results(plan.settled, rows), key=lambda d: order.get(d.doc_id, 0))
    report = IndexReport(
        documents=tuple(documents),
        policy=job.policy,
        methods=tuple(methods),
        model=job.model,
        cancelled=cancelled,
        elapsed_s=time.perf_counter() - started,
        halted=halted,
    )
    return RayIndexReport(
        report=report,
        stages=stage_stats(rows),
        workers=options.workers,
        pipeline_s=ray_s,
        resources=resources,
    )
