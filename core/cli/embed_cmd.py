"""``chunkscope embed FILE --policy NAME [--method M]``: chunk one file and embed its chunks.

With ``--json`` one object is printed::

    {"document": {...}, "model": {"name", "max_tokens", "pooling", "dim", "device"},
     "method": M, "policy": {...},
     M: {"window", "stride", "margin", "windows": [...]}  # a windowed M (late) only
     "chunks": [{...Chunk.to_dict()..., "vector": [floats], "windows": [ints],
                 "context": "full|partial|none", "truncated_tokens": n,
                 "full_context_tokens": n, "embed_token_count": n}]}

Without ``--json``, a table (one row per chunk) and a summary. A progress bar is drawn on
stderr while encoding.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from core import defaults, methods
from core.chunk import chunk_document
from core.cli.options import add_file_and_policy_options, policy_of
from core.cli.progress import ProgressBar
from core.embed import late_windows, load_encoder, window_policy
from core.embed.late import document_tokens
from core.formats import document_to_dict, load_document, parse_document
from core.methods.embedding import check_late_pooling, embed_chunks, embedding_of
from core.model.tokens import load_tokenizer

if TYPE_CHECKING:
    from core.methods import MethodSpec

_SEPARATOR = " > "


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "embed",
        help="chunk a file and embed its chunks with one dense method",
        description=(
            "Chunk FILE under a policy and embed every chunk with one method. The chunk "
            "spans are the same under every method; only the vectors differ."
        ),
    )

    add_file_and_policy_options(parser)
    default = defaults.EMBED_METHOD
    parser.add_argument(
        "--method",
        choices=methods.embedding_methods(),
        default=default,
        help=f"a dense method ({default})",
    )
    parser.add_argument("--model", metavar="DIR", help="local model folder (default: MiniLM)")
    parser.add_argument("--pooling", choices=("mean", "cls"), help="override the model's pooling")
    parser.add_argument(
        "--max-tokens", type=int, help="sequence limit incl. special tokens (model's own)"
    )
    windowed = methods.embedding_method(windowed=True).name
    parser.add_argument("--window", type=int, help=f"{windowed}: content tokens per macro-window")
    parser.add_argument("--stride", type=int, help=f"{windowed}: tokens between window starts")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    policy = policy_of(args)
    doc = load_document(args.file, password=args.password)
    encoder = load_encoder(
        args.model, pooling=args.pooling, device=args.device, max_tokens=args.max_tokens
    )
    spec, embedding = embedding_of(args.method)
    late_policy = None
    if spec.needs_mean_pooling:
        check_late_pooling(encoder)
    if embedding.windowed:
        late_policy = window_policy(
            encoder,
            window_tokens=args.window,
            stride_tokens=args.stride,
            doc_tokens=len(document_tokens(encoder, doc)),
        )
    blocks = parse_document(doc, parser=args.parser).blocks
    chunks = chunk_document(doc, blocks, policy, load_tokenizer(args.model))
    bar = ProgressBar(f"embedding {args.method}")
    started = time.perf_counter()
    try:
        vectors = embed_chunks(
            doc,
            chunks,
            spec,
            encoder,
            window_tokens=args.window,
            stride_tokens=args.stride,
            progress=bar,
        )
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    if args.json:
        payload = json_payload(doc, encoder, args, policy, chunks, vectors, late_policy)
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    try:
        print_table(chunks, vectors, sys.stdout)
        print_summary(doc.doc_id, encoder, spec, vectors, elapsed, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `chunkscope embed ... | head` closed the pipe: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def json_payload(
    doc: Any,
    encoder: Any,
    args: argparse.Namespace,
    policy: Any,
    chunks: Sequence[Any],
    vectors: Sequence[Any],
    late_policy: Any,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "document": document_to_dict(doc),
        "model": model_dict(encoder),
        "method": args.method,
        "policy": policy.to_dict(),
        "chunks": [chunk_record(c, v) for c, v in zip(chunks, vectors, strict=True)],
    }
    if late_policy is not None:
        windows = late_windows(doc, encoder, window_tokens=args.window, stride_tokens=args.stride)
        payload[args.method] = {  # the windows of this (windowed) method
            "window": late_policy.window,
            "stride": late_policy.stride,
            "margin": late_policy.margin,
            "windows": [w.to_dict() for w in windows],
        }
    return payload


def model_dict(encoder: Any) -> dict[str, object]:
    return {
        "name": encoder.name,
        "max_tokens": encoder.max_tokens,
        "pooling": encoder.pooling,
        "dim": encoder.dim,
        "device": encoder.device,
    }


def chunk_record(chunk: Any, vector: Any) -> dict[str, object]:
    """``Chunk.to_dict()`` plus the vector and what the encoder saw of the chunk."""
    record = chunk.to_dict(with_text=True)
    record.update(
        {
            "vector": [float(x) for x in vector.vector.tolist()],
            "windows": list(vector.windows),
            "context": vector.context,
            "truncated_tokens": vector.truncated_tokens,
            "full_context_tokens": vector.full_context_tokens,
            "embed_token_count": vector.token_count,
        }
    )
    return record


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def _windows(windows: Sequence[int]) -> str:
    if not windows:
        return "-"
    return str(windows[0]) if len(windows) == 1 else f"{windows[0]}-{windows[-1]}"


def print_table(chunks: Sequence[Any], vectors: Sequence[Any], out: TextIO) -> None:
    print(
        f"{'#':>4}  {'chars':>13}  {'tokens':>6}  {'cut':>4}  {'win':>5}  {'context':>7}  "
        f"{'heading path':<24}  text",
        file=out,
    )
    for n, (chunk, vec) in enumerate(zip(chunks, vectors, strict=True), start=1):
        span = f"{chunk.char_start}-{chunk.char_end}"
        heading = _one_line(_SEPARATOR.join(chunk.heading_path), 24)
        print(
            f"{n:>4}  {span:>13}  {vec.token_count:>6}  {vec.truncated_tokens or '':>4}  "
            f"{_windows(vec.windows):>5}  {vec.context:>7}  {heading:<24}  "
            f"{_one_line(chunk.text, 50)}",
            file=out,
        )


def print_summary(
    doc_id: str,
    encoder: Any,
    spec: MethodSpec,
    vectors: Sequence[Any],
    elapsed: float,
    out: TextIO,
) -> None:
    """``spec``: the method embedded (a windowed one also reports the chunks' context)."""
    print(file=out)
    print(
        f"{doc_id}: {len(vectors)} chunks embedded with {spec.name} by {encoder.name} "
        f"({encoder.pooling} pooling, max {encoder.max_tokens} tokens, {encoder.device}) "
        f"in {elapsed:.2f} s",
        file=out,
    )
    cut = [v for v in vectors if v.truncated_tokens]
    if cut:
        lost = sum(v.truncated_tokens for v in cut)
        print(
            f"{len(cut)} chunks truncated (column cut): {lost} tokens never seen by the model",
            file=out,
        )
    if spec.embedding is not None and spec.embedding.windowed and vectors:
        full = sum(v.full_context_tokens for v in vectors)
        total = sum(v.token_count for v in vectors) or 1
        partial = sum(1 for v in vectors if v.context == "partial")
        print(
            f"{partial} chunks with partial context; {100 * full / total:.0f}% of tokens had "
            "full context",
            file=out,
        )
