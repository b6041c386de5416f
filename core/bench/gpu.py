"""Late chunking at long context: one ``L``-token pass vs ``L/512`` passes of 512 tokens.

A BERT-base-shaped encoder (12 layers, width 768, 12 heads, feed-forward 3072, 8,192
positions) with random weights (``BertConfig`` + ``BertModel``: nothing is downloaded),
SDPA attention, in fp32 and bf16, runs through our ``Encoder.forward`` (the forward pass
late and naive embedding share). Late: one row of ``L`` tokens (``[CLS]`` + ``L - 2`` +
``[SEP]``). Naive: the same number of tokens as ``L / 512`` rows of 512 in one batch.

Expected cost from FLOPs (``embed_cases.encoder_flops``): per layer ``24*L*d^2 + 4*L^2*d``
for a pass of ``L`` tokens, so late/naive = ``(24*d + 4*L) / (24*d + 4*512)``: 1.30x at
2k, 1.70x at 4k and 2.50x at 8k for ``d = 768``. Attention kernels run below the dense
layers' efficiency, so the measured ratio is expected above the FLOP ratio.

The case runs only with ``--device cuda`` on a machine with CUDA; elsewhere its rows are
skipped with the reason, and still show the FLOP ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from core.bench.embed_cases import encoder_flops
from core.bench.inputs import BenchSettings
from core.bench.report import CaseResult
from core.bench.timing import interleaved
from core.embed.encoder import Encoder
from core.methods import BENCHED
from core.model.paths import resolve_model_dir

CHUNK_TOKENS = 512


@dataclass(frozen=True, slots=True, kw_only=True)
class EncoderShape:
    layers: int = 12
    hidden: int = 768
    heads: int = 12
    ffn: int = 3072
    positions: int = 8192
    vocab: int = 30522


BERT_BASE = EncoderShape()


def flop_ratio(length: int, shape: EncoderShape = BERT_BASE, chunk: int = CHUNK_TOKENS) -> float:
    """FLOPs of one ``length``-token pass over ``length / chunk`` passes of ``chunk``."""
    dims = {"hidden": shape.hidden, "layers": shape.layers, "ffn": shape.ffn}
    late = encoder_flops(length, **dims)
    naive = (length // chunk) * encoder_flops(chunk, **dims)
    return late / naive


# A model argument every PretrainedConfig takes through **kwargs (not in BertConfig's stub).
_SDPA: dict[str, Any] = {"attn_implementation": "sdpa"}


def random_encoder(shape: EncoderShape, device: str) -> Any:
    """Our ``Encoder`` around a randomly initialised BERT of ``shape`` (seeded)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    config = BertConfig(
        vocab_size=shape.vocab,
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=shape.ffn,
        max_position_embeddings=shape.positions,
        **_SDPA,
    )
    torch.manual_seed(0)
    model = BertModel(config, add_pooling_layer=False).eval().to(device)
    model_dir = resolve_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    return Encoder(
        name=f"bert-{shape.layers}x{shape.hidden}-random",
        model_dir=model_dir,
        model=model,
        tokenizer=tokenizer,
        pooling="mean",
        max_tokens=shape.positions,
        position_limit=shape.positions,
        device=device,
    )


def long_context_rows(
    *,
    device: str,
    lengths: Sequence[int],
    dtypes: Sequence[str] = ("fp32", "bf16"),
    shape: EncoderShape = BERT_BASE,
    chunk: int = CHUNK_TOKENS,
    warmup: int = 2,
    repeats: int = 10,
) -> list[CaseResult]:
    """Time late (one pass) vs naive (batched ``chunk``-token passes) on any device."""
    import torch

    encoder = random_encoder(shape, device)
    rng = np.random.default_rng(0)
    wrap, specials = encoder.specials.wrap, encoder.specials.count
    rows: list[CaseResult] = []
    for dtype in dtypes:
        encoder.model.to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
        for length in lengths:
            ids = rng.integers(1000, shape.vocab, size=length).tolist()
            late_rows = [wrap(ids[: length - specials])]
            step = chunk - specials
            naive_rows = [
                wrap(ids[lo : lo + step]) for lo in range(0, (length // chunk) * step, step)
            ]

            def run(batch: list[list[int]]) -> object:
                out = encoder.forward(batch)[0]
                if device == "cuda":
                    torch.cuda.synchronize()
                return out.shape

            t = interleaved(  # raw forward passes shaped like late and naive encoding
                {
                    "one pass": partial(_ignore_step, run, late_rows),
                    "chunked": partial(_ignore_step, run, naive_rows),
                },
                warmup=warmup,
                repeats=repeats,
            )
            rows.append(_row(length, dtype, shape, chunk, t["one pass"], t["chunked"]))
    return rows


def _ignore_step(
    run: Callable[[list[list[int]]], object], batch: list[list[int]], step: int
) -> object:
    """``run(batch)`` as an ``interleaved`` contender (which passes the round's step)."""
    return run(batch)


def _row(
    length: int, dtype: str, shape: EncoderShape, chunk: int, late: Any, naive: Any
) -> CaseResult:
    ratio = flop_ratio(length, shape, chunk)
    return CaseResult(
        key=f"gpu:{length}:{dtype}",
        case="gpu",
        label=f"{BENCHED.windowed}/{BENCHED.alone} {length} tok {dtype}",
        ours=late.median_s,
        baseline=naive.median_s,
        baseline_label=f"{length // chunk}x{chunk}",
        target=f"FLOPs {ratio:.2f}x",
        notes=(),
        extra={"flop_ratio": ratio, "tokens": length, "dtype": dtype},
        ours_samples=late.samples_s,
        baseline_samples=naive.samples_s,
    )


def gpu_cases(settings: BenchSettings) -> list[CaseResult]:
    """The ``--device cuda`` rows, or the same rows skipped with the reason."""
    reason = _skip_reason(settings.device)
    if reason is None:
        rows = long_context_rows(device="cuda", lengths=settings.gpu_lengths)
        note = f"SDPA attention, random-weight BERT-base shape, {torch_line()}"
        return [_add_note(rows[0], note), *rows[1:]] if rows else rows
    return [
        CaseResult(
            key=f"gpu:{n}",
            case="gpu",
            label=f"{BENCHED.windowed}/{BENCHED.alone} {n} tok",
            target=f"FLOPs {flop_ratio(n):.2f}x",
            skipped=reason,
            extra={"flop_ratio": flop_ratio(n), "tokens": n},
        )
        for n in settings.gpu_lengths
    ]


def _skip_reason(device: str) -> str | None:
    import torch

    if device != "cuda":
        return "long-context timing runs only with --device cuda"
    if not torch.cuda.is_available():
        return f"CUDA is not available on this machine (torch {torch.__version__})"
    return None


def torch_line() -> str:
    import torch

    return f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}"


def _add_note(row: CaseResult, note: str) -> CaseResult:
    from dataclasses import replace

    return replace(row, notes=(*row.notes, note))
