"""``chunkscope chunk FILE --policy NAME``: load, parse and chunk one file.

With ``--json`` one object is printed: ``{"document": {...}, "policy": {...},
"chunks": [...]}``; each chunk carries every field of ``Chunk.to_dict`` including its
``text`` (and, with ``--table-header-prefix``, the ``encoder_text`` an encoder reads);
``--with-text`` adds the document's full text to ``"document"``. Without
``--json``, a table (one row per chunk) and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import TYPE_CHECKING, TextIO

from core.chunk import chunk_document
from core.cli.options import add_file_and_policy_options, policy_of
from core.formats import document_to_dict, load_document, parse_document
from core.imported.live import anchor_counts
from core.model.tokens import load_tokenizer
from core.provenance.cite import format_clock

if TYPE_CHECKING:
    from core.provenance.types import Chunk

_SEPARATOR = " > "


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chunk",
        help="chunk a document under a policy",
        description=(
            "Chunk FILE under a policy and print the chunks with their exact spans. "
            "With --table-header-prefix each chunk's encoder_text is in --json too."
        ),
    )
    add_file_and_policy_options(parser)
    parser.add_argument("--model", metavar="DIR", help="model folder whose tokenizer counts")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--with-text", action="store_true", help="include the document's full text (JSON)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    policy = policy_of(args)
    started = time.perf_counter()
    doc = load_document(args.file, password=args.password)
    parsed = parse_document(doc, parser=args.parser)
    tokenizer = load_tokenizer(args.model)
    chunked_at = time.perf_counter()
    chunks = chunk_document(doc, parsed.blocks, policy, tokenizer)
    finished = time.perf_counter()
    if args.json:
        payload = {
            "document": document_to_dict(doc, with_text=args.with_text),
            "policy": policy.to_dict(),
            "chunks": [_chunk_record(chunk, policy.table_header_prefix) for chunk in chunks],
        }
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    timing = {
        "load+parse": chunked_at - started,
        "chunk": finished - chunked_at,
        "total": finished - started,
    }
    try:
        print_table(chunks, sys.stdout)
        print_summary(doc.doc_id, policy.key, chunks, timing, sys.stdout)
        placed = anchor_counts(doc, policy)  # a splitter of the user's own: how its pieces lie
        if placed is not None:
            print(placed.line(), file=sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `chunkscope chunk ... | head` closed the pipe: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _chunk_record(chunk: Chunk, prefixed: bool) -> dict[str, object]:
    record = chunk.to_dict(with_text=True)
    if prefixed:
        record["encoder_text"] = chunk.encoder_text
    return record


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def _pages(chunk) -> str:  # chunk: Chunk; a transcript chunk shows its start time
    pages = chunk.pages
    if chunk.start_s is not None:
        return format_clock(chunk.start_s)
    if not pages:
        return "-"
    return str(pages[0]) if len(pages) == 1 else f"{pages[0]}-{pages[-1]}"


def print_table(chunks, out: TextIO) -> None:  # chunks: Sequence[Chunk]
    header = f"{'#':>4}  {'chars':>15}  {'pages':>9}  {'tokens':>6}  {'heading path':<28}  text"
    print(header, file=out)
    for n, chunk in enumerate(chunks, start=1):
        span = f"{chunk.char_start}-{chunk.char_end}"
        tokens = f"{chunk.token_count}{'!' if chunk.oversize else ''}"
        heading = _one_line(_SEPARATOR.join(chunk.heading_path), 28)
        print(
            f"{n:>4}  {span:>15}  {_pages(chunk):>9}  {tokens:>6}  {heading:<28}  "
            f"{_one_line(chunk.text, 60)}",
            file=out,
        )


def print_summary(doc_id: str, policy_key: str, chunks, timing: dict[str, float], out: TextIO):
    counts = [c.token_count for c in chunks]
    lengths = [len(c.text) for c in chunks]
    print(file=out)
    print(f"{doc_id}: {len(chunks)} chunks under {policy_key}", file=out)
    if chunks:
        print(
            f"tokens min/median/max {min(counts)}/{statistics.median(counts):g}/{max(counts)}, "
            f"chars min/median/max {min(lengths)}/{statistics.median(lengths):g}/{max(lengths)}",
            file=out,
        )
    oversize = sum(1 for c in chunks if c.oversize)
    if oversize:
        print(
            f"{oversize} oversize chunks (marked !): one uncuttable unit above the size", file=out
        )
    print("time " + ", ".join(f"{k} {v:.2f} s" for k, v in timing.items()), file=out)
