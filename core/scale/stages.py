"""The three stages of a Ray index run, as Ray Data calls them (one row = one document).

1. ``parse_row`` (a CPU task per document): load, parse and chunk, exactly as the plain
   indexer's steps do; the row leaves with the pickled ``(Document, chunks)``.
2. ``Embedder`` (a stateful actor holding the encoder, one per worker or GPU): every
   pending method's records of one whole document, one output row per method. A row is a
   whole document, so late chunking sees all of it in one actor; the encoder sorts a
   document's texts by length before batching them.
3. ``Writer`` (an actor holding one connection to the Chroma server): ``upsert_document``
   per (document, method), which writes in batches within the server's maximum and sets
   the completion marker after the last one.

A ``ChunkscopeError`` of one document (unreadable file, parser failure) travels down the
stages as that row's one-line ``error``; the other rows go on. Every row carries the
seconds its stage took, so the driver can sum the work of each stage.
"""

from __future__ import annotations

import os
import pickle
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from core.embed import VectorCache
from core.errors import ChunkscopeError, StoreLostError
from core.index.indexer import DocumentFile, IndexSteps, default_steps
from core.provenance.types import ChunkPolicy
from core.store import ChunkStore


@dataclass(frozen=True, slots=True, kw_only=True)
class RayJob:
    """Everything a worker needs, pickled once with the stage.

    ``make_encoder()`` builds the encoder on the worker (the model is never shipped);
    ``model_dir`` is its tokenizer's folder, which chunking counts with; ``model`` is the
    encoder's name (it keys the collections). ``host`` is the Chroma server ``HOST:PORT``;
    ``store_batch_size`` None means the server's maximum. With ``vector_cache`` each embed
    actor keeps a ``VectorCache`` in memory for the run (keyed by model, method, document
    sha256 and span, not by id: identical bytes under another name reuse their vectors;
    it grows by one record per distinct span and method, about 1.6 KiB at 384 dimensions).
    """

    policy: ChunkPolicy
    model: str
    model_dir: str
    make_encoder: Callable[[], Any]
    host: str
    parser: str = "fast"
    password: str | None = None
    steps: IndexSteps = field(default_factory=default_steps)
    store_batch_size: int | None = None
    bf16: bool = True
    vector_cache: bool = False


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _blank(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The fields every later row carries; numbers zero until a stage fills them."""
    out = {
        "doc_id": row["doc_id"],
        "source": row["source"],
        "sha256": row.get("sha256", ""),
        "methods": list(row["methods"]),
        "skipped": list(row["skipped"]),
        "payload": b"",
        "n_chunks": -1,
        "n_tokens": 0,
        "error": "",
        "parse_s": 0.0,
    }
    out.update(extra)
    return out


def parse_row(row: dict[str, Any], *, job: RayJob) -> dict[str, Any]:
    """Load, parse and chunk one file (a CPU task)."""
    started = time.perf_counter()
    out = _blank(row)
    try:
        doc = DocumentFile(path=Path(row["path"]), password=job.password)
        loaded = doc.load()
        blocks = job.steps.parse(loaded, job.parser)
        counter = SimpleNamespace(model_dir=job.model_dir)  # chunking needs its tokenizer only
        chunks = job.steps.chunk(loaded, blocks, job.policy, counter)
    except ChunkscopeError as exc:
        out["error"] = str(exc)
    else:
        out.update(
            doc_id=loaded.doc_id,
            source=loaded.source,
            sha256=loaded.sha256,
            payload=pickle.dumps((loaded, chunks), protocol=pickle.HIGHEST_PROTOCOL),
            n_chunks=len(chunks),
            n_tokens=sum(c.token_count for c in chunks),
        )
    out["parse_s"] = time.perf_counter() - started
    return out


def _to_bf16(encoder: Any) -> None:
    """Half the memory traffic on a GPU; vectors then agree with float32 to about 1e-2."""
    import torch

    encoder.model.to(torch.bfloat16)


class Embedder:
    """A Ray actor holding one encoder; ``__call__`` maps a document row to method rows."""

    def __init__(self, job: RayJob):
        self.job = job
        self.encoder = job.make_encoder()
        if job.bf16 and getattr(self.encoder, "device", "cpu") == "cuda":
            _to_bf16(self.encoder)
        self.worker = _worker_name()
        self.cache = None
        if job.vector_cache:
            self.cache = VectorCache()

    def _embed(self, doc: Any, chunks: Any, method: str) -> tuple[Any, int]:
        """The method's records and how many came from the actor's cache."""
        if self.cache is None:
            return self.job.steps.embed(doc, chunks, method, self.encoder), 0
        hits = self.cache.hits
        vectors = self.job.steps.embed(doc, chunks, method, self.encoder, cache=self.cache)
        return vectors, self.cache.hits - hits

    def __call__(self, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if row["error"]:
            yield {**row, "method": "", "vectors": b"", "truncated": 0, "embed_s": 0.0,
                   "cached": 0, "worker": self.worker}  # fmt: skip
            return
        doc, chunks = pickle.loads(row["payload"])
        for method in row["methods"]:
            started = time.perf_counter()
            out = {**row, "method": method, "vectors": b"", "truncated": 0, "cached": 0,
                   "worker": self.worker}  # fmt: skip
            try:
                vectors, out["cached"] = self._embed(doc, chunks, method)
            except ChunkscopeError as exc:
                out["error"] = str(exc)
            else:
                out["vectors"] = pickle.dumps(vectors, protocol=pickle.HIGHEST_PROTOCOL)
                out["truncated"] = sum(1 for v in vectors if v.truncated_tokens > 0)
            out["embed_s"] = time.perf_counter() - started
            yield out


class Writer:
    """A Ray actor with one Chroma connection; stores one (document, method) a row."""

    def __init__(self, job: RayJob):
        self.job = job
        self.store = ChunkStore.open(host=job.host, batch_size=job.store_batch_size)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        out = {k: v for k, v in row.items() if k not in ("payload", "vectors")}
        out["halted"] = False
        if not row["error"]:
            doc, chunks = pickle.loads(row["payload"])
            vectors = pickle.loads(row["vectors"])
            try:
                self.store.upsert_document(
                    doc, chunks, vectors, model=self.job.model, method=row["method"],
                    policy=self.job.policy,
                )  # fmt: skip
            except StoreLostError as exc:
                out["error"], out["halted"] = str(exc), True
            except ChunkscopeError as exc:
                out["error"] = str(exc)
        out["store_s"] = time.perf_counter() - started
        return out
