"""Store cases: our ``ChunkStore`` vs raw Chroma calls with the same records.

Vectors are random unit vectors of the model's width (the store never looks at what
they mean), seeded, so every run stores the same numbers. Records carry the same
metadata and documents on both sides; ours adds what the wrapper is for (completion
markers, removal of other versions, leftover check, hit parsing).

Per document: one ``upsert_document`` into a fresh collection per round vs one raw
``upsert`` (in batches of Chroma's maximum) into a fresh collection; then top-10 queries.
At scale: top-10 query latency (p50) in collections of ``scale_sizes`` synthetic records,
built once and kept in ``BenchSettings.cache_dir`` (building 100k records takes minutes).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from core.bench.inputs import BenchInputs
from core.bench.report import CaseResult
from core.bench.timing import Timing, interleaved, timed
from core.chunk import default_policy
from core.embed import ChunkVector
from core.methods import BENCHED
from core.model.paths import resolve_model_dir
from core.provenance.types import Chunk, ChunkPolicy, Document
from core.store import ChunkStore
from core.store.chroma_records import chunk_metadata

MODEL = "bench-random"
SEED = 0
TOP_K = 10
DENSE = BENCHED.alone  # the method the synthetic records are stored under


def _unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def model_dim() -> int:
    return int(json.loads((resolve_model_dir() / "config.json").read_text())["hidden_size"])


def _records(doc: Document, chunks: list[Chunk], policy: ChunkPolicy, model: str) -> dict:
    matrix = _unit_vectors(len(chunks), model_dim(), SEED)
    vectors = [
        ChunkVector(chunk_id=c.chunk_id, method=DENSE, vector=matrix[i], token_count=c.token_count)
        for i, c in enumerate(chunks)
    ]
    metas = [
        chunk_metadata(doc, c, v, chunk_index=i, model=model, method=DENSE, policy=policy)
        for i, (c, v) in enumerate(zip(chunks, vectors, strict=True))
    ]
    return {"vectors": vectors, "matrix": matrix, "metas": metas}


def _raw_client(path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _raw_upsert(col: Any, ids: list, matrix: np.ndarray, metas: list, texts: list, batch: int):
    for lo in range(0, len(ids), batch):
        hi = lo + batch
        col.upsert(
            ids=ids[lo:hi], embeddings=matrix[lo:hi], metadatas=metas[lo:hi], documents=texts[lo:hi]
        )


def _raw_query(col: Any, vector: np.ndarray) -> dict:
    return col.query(
        query_embeddings=[vector],
        n_results=TOP_K,
        include=["metadatas", "documents", "distances"],
    )


def store_cases(inputs: BenchInputs) -> list[CaseResult]:
    """Upsert and query rows for the headline document (structure policy chunks)."""
    s = inputs.settings
    doc, policy = inputs.document(s.pdf), default_policy("structure")
    chunks = inputs.chunks(doc, inputs.blocks(s.pdf), policy)
    with tempfile.TemporaryDirectory(prefix="chunkscope-bench-") as tmp:
        up, q, batch = _store_timings(inputs, Path(tmp), doc, chunks, policy)
    n = len(chunks)
    return [
        _row(f"store:upsert:{doc.doc_id}", f"store upsert {n} chunks", up, "raw upsert",
             f"{n} records with metadata and text; raw in batches of {batch}"),
        _row(f"store:query:{doc.doc_id}", f"store query top-{TOP_K} in {n}", q, "raw query",
             "median of single queries; ours parses every hit into a checked record"),
    ]  # fmt: skip


def _store_timings(
    inputs: BenchInputs, folder: Path, doc: Document, chunks: list[Chunk], policy: ChunkPolicy
) -> tuple[dict[str, Timing], dict[str, Timing], int]:
    """Upsert timings (a fresh collection per round), then query timings on the last."""
    s = inputs.settings
    rec = _records(doc, chunks, policy, MODEL)
    ids, texts = [c.chunk_id for c in chunks], [c.text for c in chunks]
    ours, raw = ChunkStore.open(folder / "ours"), _raw_client(folder / "raw")
    batch = int(raw.get_max_batch_size())

    def ours_upsert(step: int) -> object:
        return ours.upsert_document(
            doc, chunks, rec["vectors"], model=f"{MODEL}-{step}", method=DENSE, policy=policy
        )

    def raw_upsert(step: int) -> object:
        col = raw.get_or_create_collection(
            f"raw-{step}", metadata={"hnsw:space": "cosine"}, embedding_function=None
        )
        _raw_upsert(col, ids, rec["matrix"], rec["metas"], texts, batch)
        return col

    up = interleaved({"ours": ours_upsert, "raw": raw_upsert}, warmup=s.warmup, repeats=s.repeats)
    last = s.warmup + s.repeats - 1
    raw_col = raw.get_collection(f"raw-{last}", embedding_function=None)
    queries = _unit_vectors(s.warmup + max(s.repeats, 20), model_dim(), SEED + 1)
    q = interleaved(
        {
            "ours": lambda step: ours.query(
                queries[step], model=f"{MODEL}-{last}", method=DENSE, policy=policy, k=TOP_K
            ),
            "raw": lambda step: _raw_query(raw_col, queries[step]),
        },
        warmup=s.warmup,
        repeats=len(queries) - s.warmup,
        check=_check_hits,
    )
    return up, q, batch


def _check_hits(name: str, result: Any) -> None:
    if name == "ours":
        for hit in result:
            if len(hit.text) != hit.char_end - hit.char_start:
                raise AssertionError(f"hit {hit.chunk_id} does not fill its span")


def _row(key: str, label: str, t: dict[str, Timing], baseline: str, note: str) -> CaseResult:
    return CaseResult(
        key=key,
        case="store",
        label=label,
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label=baseline,
        max_ratio=1.1,
        target="<= 1.1x",
        notes=(note,),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


def scale_case(inputs: BenchInputs, n: int) -> CaseResult:
    """Top-10 query p50 through our wrapper and raw Chroma in a collection of ``n`` records."""
    s = inputs.settings
    doc = inputs.document(s.pdf)
    store = ChunkStore.open(s.cache_dir / "scale")
    model, policy, build_s = _ensure_scale(store, doc, n)
    col = store.client.get_collection(
        ChunkStore.collection_name(model, DENSE, policy), embedding_function=None
    )
    queries = _unit_vectors(2 + s.scale_queries, model_dim(), SEED + 2)
    t = interleaved(
        {
            "ours": lambda step: store.query(
                queries[step], model=model, method=DENSE, policy=policy
            ),
            "raw": lambda step: _raw_query(col, queries[step]),
        },
        warmup=2,
        repeats=s.scale_queries,
        check=_check_hits,
    )
    built = f"built in {build_s:.0f} s" if build_s is not None else "reused from the cache"
    row = _row(
        f"store:query:{n}",
        f"store query p50 in {n:,}",
        t,
        "raw query",
        f"{s.scale_queries} queries; p95 ours {t['ours'].percentile_s(95) * 1e3:.1f} ms, "
        f"raw {t['raw'].percentile_s(95) * 1e3:.1f} ms; collection {built} "
        f"({s.cache_dir / 'scale'})",
    )
    extra = {"build_s": build_s, "p95_ours_s": t["ours"].percentile_s(95), "vectors": n}
    return _with_extra(row, extra)


def _with_extra(row: CaseResult, extra: dict[str, Any]) -> CaseResult:
    from dataclasses import replace

    return replace(row, extra={**row.extra, **extra})


def _ensure_scale(store: Any, doc: Document, n: int) -> tuple[str, ChunkPolicy, float | None]:
    """A collection of ``n`` synthetic records of ``doc`` (exact 64-char spans, ids
    ``syn-<i>``); returns its model name, policy and the build time (None if reused)."""
    policy = default_policy("fixed")
    dim = model_dim()
    model = f"bench-synthetic-{n}-d{dim}-s{SEED}"
    name = store.collection_name(model, DENSE, policy)
    col = store.client.get_or_create_collection(
        name, metadata={"hnsw:space": "cosine", "model": model}, embedding_function=None
    )
    if col.count() == n:
        return model, policy, None
    elapsed, _ = timed(lambda: _fill_scale(col, store, doc, n, model, policy, dim))
    return model, policy, elapsed


def _fill_scale(
    col: Any, store: Any, doc: Document, n: int, model: str, policy: ChunkPolicy, dim: int
) -> None:
    width = 64
    room = max(1, len(doc.text) - width)
    sample = Chunk(
        chunk_id="syn", doc_id=doc.doc_id, doc_sha256=doc.sha256, char_start=0, char_end=width,
        text=doc.text[:width], pages=(), heading_path=(), block_kinds=(), token_count=0,
        policy=policy,
    )  # fmt: skip
    vector = ChunkVector(
        chunk_id="syn", method=DENSE, vector=np.zeros(dim, np.float32), token_count=0
    )
    base = chunk_metadata(
        doc, sample, vector, chunk_index=0, model=model, method=DENSE, policy=policy
    )
    batch = int(store.client.get_max_batch_size())
    for lo in range(0, n, batch):
        rows = range(lo, min(lo + batch, n))
        starts = [(i * 7919) % room for i in rows]
        metas = [
            {**base, "char_start": a, "char_end": a + width, "chunk_index": i}
            for i, a in zip(rows, starts, strict=True)
        ]
        col.upsert(
            ids=[f"syn-{i:07d}" for i in rows],
            embeddings=_unit_vectors(len(rows), dim, SEED + 10 + lo),
            metadatas=metas,
            documents=[doc.text[a : a + width] for a in starts],
        )
