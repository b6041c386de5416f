"""Sweep cases: late chunking over many policies at pooling cost, from the state store.

All rows embed the embedding input (``BenchSettings.embed_chars`` of the headline PDF)
under ``SWEEP_POLICIES``, chunked once, untimed. Every late run starts with the document
token cache cleared (as a first embedding of a document does) and a fresh state folder:

- ``sweep:late-6``: late over all six policies with one ``VectorCache`` whose states go
  to disk (one forward pass, then six poolings), against late over the first policy
  alone without a cache (one forward pass and one pooling); target <= 1.3x;
- ``sweep:pool``: one policy pooled from the float16 states on disk, read by a fresh
  cache (a new process would read them so), against that policy's forward pass and
  pooling without a cache; target <= 0.05x;
- ``sweep:state-size``: the state file's size per 1,000 tokens, reported.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from core.bench.inputs import BenchInputs, check_spans
from core.bench.report import CaseResult
from core.bench.timing import interleaved
from core.embed import VectorCache
from core.embed.late import document_tokens
from core.formats import parse_document
from core.methods import BENCHED
from core.methods.embedding import embed_chunks
from core.provenance.types import ChunkPolicy

LATE = BENCHED.windowed

SWEEP_POLICIES: tuple[ChunkPolicy, ...] = (
    ChunkPolicy(name="fixed", size=64, overlap=0, unit="tokens"),
    ChunkPolicy(name="fixed", size=128, overlap=12, unit="tokens"),
    ChunkPolicy(name="fixed", size=256, overlap=25, unit="tokens"),
    ChunkPolicy(name="fixed", size=512, overlap=51, unit="tokens"),
    ChunkPolicy(name="structure", size=240, overlap=24, unit="tokens"),
    ChunkPolicy(name="sentence", size=5, overlap=1, unit="sentences"),
)


def _workload(inputs: BenchInputs) -> dict[str, Any]:
    doc = inputs.head_document()
    blocks = parse_document(doc).blocks
    chunked = [inputs.chunks(doc, blocks, p) for p in SWEEP_POLICIES]
    for chunks in chunked:
        check_spans(doc, chunks, "chunk")
    return {"doc": doc, "chunked": chunked, "encoder": inputs.encoder()}


def sweep_cases(inputs: BenchInputs) -> list[CaseResult]:
    work = _workload(inputs)
    doc, chunked, encoder = work["doc"], work["chunked"], work["encoder"]
    s = inputs.settings
    with tempfile.TemporaryDirectory(prefix="chunkscope-bench-states-") as root:

        def over_all(step: int) -> object:
            encoder.doc_token_cache.clear()
            cache = VectorCache(state_folder=Path(root) / f"all-{step}")
            return [embed_chunks(doc, c, LATE, encoder, cache=cache) for c in chunked]

        def over_one(step: int) -> object:
            encoder.doc_token_cache.clear()
            return embed_chunks(doc, chunked[0], LATE, encoder)

        stored = Path(root) / "stored"
        embed_chunks(doc, chunked[0], LATE, encoder, cache=VectorCache(state_folder=stored))

        def pooled(step: int) -> object:
            encoder.doc_token_cache.clear()
            cache = VectorCache(state_folder=stored)
            return embed_chunks(doc, chunked[0], LATE, encoder, cache=cache)

        timings = interleaved(
            {"all": over_all, "one": over_one, "pooled": pooled},
            warmup=s.warmup,
            repeats=s.embed_repeats,
        )
        size = sum(p.stat().st_size for p in stored.glob("*.npz"))
    return _rows(doc, chunked, encoder, timings, size)


def _rows(doc: Any, chunked: list, encoder: Any, timings: dict, size: int) -> list[CaseResult]:
    n_tokens = len(document_tokens(encoder, doc))
    sizes = ", ".join(f"{p.key} {len(c)}" for p, c in zip(SWEEP_POLICIES, chunked, strict=True))
    per_k = size / n_tokens * 1000 / 2**20
    return [
        CaseResult(
            key=f"sweep:{LATE}-6",
            case="sweep",
            label=f"{LATE} over {len(SWEEP_POLICIES)} policies, {doc.doc_id}",
            ours=timings["all"].median_s,
            baseline=timings["one"].median_s,
            baseline_label=f"{LATE} over 1 policy",
            max_ratio=1.3,
            target="<= 1.3x",
            notes=(f"{n_tokens:,} tokens; chunks per policy: {sizes}",),
            ours_samples=timings["all"].samples_s,
            baseline_samples=timings["one"].samples_s,
        ),
        CaseResult(
            key="sweep:pool",
            case="sweep",
            label=f"{LATE} pooled from stored states, {len(chunked[0])} chunks",
            ours=timings["pooled"].median_s,
            baseline=timings["one"].median_s,
            baseline_label="forward pass + pooling",
            max_ratio=0.05,
            target="<= 0.05x",
            notes=("float16 states read from disk by a fresh cache, then pooled",),
            ours_samples=timings["pooled"].samples_s,
            baseline_samples=timings["one"].samples_s,
        ),
        CaseResult(
            key="sweep:state-size",
            case="sweep",
            label=f"{LATE} state file per 1,000 tokens",
            unit="MiB",
            ours=per_k,
            target="reported",
            notes=(
                f"{size:,} bytes for {n_tokens:,} tokens x {encoder.dim} dims, float16: "
                f"{size / n_tokens * 1000 / 1024:,.0f} KiB per 1,000 tokens",
            ),
            extra={"bytes": size, "tokens": n_tokens, "dim": encoder.dim},
        ),
    ]
