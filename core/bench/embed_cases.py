"""Embedding cases: our naive path vs sentence-transformers, our late path vs our naive.

All contenders embed the same chunks (the ``structure`` policy's default chunks of the
embedding input, see ``BenchSettings.embed_chars``) in one interleaved run, so both
ratios come from the same rounds. The late document-token cache is cleared before every
late run: each run tokenizes the document, as a first embedding of it does.

FLOPs explain the late/naive ratio: a pass over ``L`` tokens (special tokens included) of
an encoder with ``layers`` layers, width ``d`` and feed-forward width ``f`` costs about
``layers * (8*L*d^2 + 4*L*d*f + 4*L^2*d)`` (``= 24*L*d^2 + 4*L^2*d`` per layer when
``f = 4d``): projections and feed-forward, plus the two attention products.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.bench.inputs import BenchInputs, check_spans
from core.bench.report import CaseResult
from core.bench.timing import Timing, interleaved
from core.chunk import default_policy
from core.embed import late_windows
from core.formats import parse_document
from core.methods import BENCHED
from core.methods.embedding import embed_chunks

ALONE, WINDOWED = BENCHED.alone, BENCHED.windowed  # the two embed cases, and their keys


def encoder_flops(length: int, *, hidden: int, layers: int, ffn: int) -> float:
    """Forward FLOPs of one sequence of ``length`` tokens (see the module docstring)."""
    per_layer = 8 * length * hidden**2 + 4 * length * hidden * ffn + 4 * length**2 * hidden
    return float(layers * per_layer)


def _flops(encoder: Any, lengths: list[int]) -> float:
    config = encoder.model.config
    shape = {
        "hidden": int(config.hidden_size),
        "layers": int(config.num_hidden_layers),
        "ffn": int(config.intermediate_size),
    }
    return sum(encoder_flops(n, **shape) for n in lengths)


def _workload(inputs: BenchInputs) -> dict[str, Any]:
    """Chunks of the embedding input and the sequence lengths each method runs."""
    doc = inputs.head_document()
    blocks = parse_document(doc).blocks
    chunks = inputs.chunks(doc, blocks, default_policy("structure"))
    encoder = inputs.encoder()
    specials = encoder.specials.count
    keep = encoder.content_tokens
    naive_lengths = [
        min(len(ids), keep) + specials for ids in encoder.content_ids([c.text for c in chunks])
    ]
    late_lengths = [w.n_tokens + specials for w in late_windows(doc, encoder)]
    return {
        "doc": doc,
        "chunks": chunks,
        "naive_lengths": naive_lengths,
        "late_lengths": late_lengths,
    }


def embed_run(inputs: BenchInputs) -> dict[str, Any]:
    """Time every embedding contender the run asked for, once, interleaved (cached)."""
    if inputs.embed_timings is not None:
        return inputs.embed_timings

    s = inputs.settings
    work = _workload(inputs)
    doc, chunks, encoder = work["doc"], work["chunks"], inputs.encoder()
    contenders: dict[str, Any] = {
        ALONE: lambda step: embed_chunks(doc, chunks, ALONE, encoder),
    }
    texts = [c.text for c in chunks]
    st_model, st_missing = _sentence_transformer(encoder) if ALONE in s.cases else (None, None)
    if st_model is not None:
        contenders["st"] = lambda step: st_model.encode(
            texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False
        )
    if WINDOWED in s.cases:

        def late(step: int) -> object:
            encoder.doc_token_cache.clear()
            return embed_chunks(doc, chunks, WINDOWED, encoder)

        contenders[WINDOWED] = late
    check_spans(doc, chunks, "chunk")
    results: dict[str, Any] = {}

    ids = [c.chunk_id for c in chunks]

    def keep(name: str, value: Any) -> None:
        if name != "st" and [v.chunk_id for v in value] != ids:
            raise AssertionError(f"{name} vectors do not match the chunks one to one")
        results[name] = value

    timings = interleaved(contenders, warmup=s.warmup, repeats=s.embed_repeats, check=keep)
    work.update(timings=timings, results=results, st_missing=st_missing)
    inputs.embed_timings = work
    return work


def _sentence_transformer(encoder: Any) -> tuple[Any, str | None]:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None, "sentence-transformers is not installed (the bench extra)"
    model = SentenceTransformer(str(encoder.model_dir), device=encoder.device)
    model.max_seq_length = encoder.max_tokens
    return model, None


def naive_case(inputs: BenchInputs) -> CaseResult:
    work = embed_run(inputs)
    timings: dict[str, Timing] = work["timings"]
    doc, chunks = work["doc"], work["chunks"]
    label = f"{ALONE} embed {len(chunks)} chunks"
    if "st" not in timings:
        return CaseResult(
            key=f"{ALONE}:{doc.doc_id}", case=ALONE, label=label, skipped=work["st_missing"]
        )
    ours = np.stack([v.vector for v in work["results"][ALONE]])
    gap = float(np.abs(ours - np.asarray(work["results"]["st"])).max())
    tokens = sum(work["naive_lengths"])
    return CaseResult(
        key=f"{ALONE}:{doc.doc_id}",
        case=ALONE,
        label=label,
        ours=timings[ALONE].median_s,
        baseline=timings["st"].median_s,
        baseline_label="sentence-transformers",
        max_ratio=1.05,
        target="<= 1.05x",
        notes=(
            f"{doc.doc_id}: {len(doc.text):,} chars, {tokens:,} tokens encoded; "
            f"largest |ours - sentence-transformers| per component {gap:.1e}",
        ),
        extra={"max_abs_diff": gap, "tokens": tokens, "chunks": len(chunks)},
        ours_samples=timings[ALONE].samples_s,
        baseline_samples=timings["st"].samples_s,
    )


def late_case(inputs: BenchInputs) -> CaseResult:
    work = embed_run(inputs)
    timings: dict[str, Timing] = work["timings"]
    doc, chunks, encoder = work["doc"], work["chunks"], inputs.encoder()
    naive_flops = _flops(encoder, work["naive_lengths"])
    late_flops = _flops(encoder, work["late_lengths"])
    flop_ratio = late_flops / naive_flops
    n_late, n_naive = sum(work["late_lengths"]), sum(work["naive_lengths"])
    window = work["late_lengths"][0] if work["late_lengths"] else 0
    return CaseResult(
        key=f"{WINDOWED}:{doc.doc_id}",
        case=WINDOWED,
        label=f"{WINDOWED} embed {len(chunks)} chunks",
        ours=timings[WINDOWED].median_s,
        baseline=timings[ALONE].median_s,
        baseline_label=f"our {ALONE}",
        max_ratio=1.1,
        target="<= 1.1x",
        notes=(
            f"{WINDOWED} runs {len(work['late_lengths'])} windows of {window} tokens = {n_late:,} "
            f"tokens; {ALONE} runs {len(chunks)} chunks = {n_naive:,} tokens "
            f"({n_late / n_naive:.2f}x tokens, {flop_ratio:.2f}x FLOPs)",
        ),
        extra={
            "flop_ratio": flop_ratio,
            "late_tokens": n_late,
            "naive_tokens": n_naive,
            "windows": len(work["late_lengths"]),
        },
        ours_samples=timings[WINDOWED].samples_s,
        baseline_samples=timings[ALONE].samples_s,
    )
