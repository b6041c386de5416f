"""``chunkscope export FILE --policy NAME --shape langchain|llamaindex [--out F.jsonl]``.

Chunks FILE exactly as ``chunk`` does (same options, same spans) and writes one JSON
object a line in the shape a LangChain or LlamaIndex user loads directly, with the full
provenance in its metadata (``core.render.export``). Without ``--out`` the lines go to stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.chunk import chunk_document
from core.cli.options import add_file_and_policy_options, check_out, policy_of
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer


def register(subparsers: argparse._SubParsersAction) -> None:
    from core.render.export import EXPORT_SHAPES

    parser = subparsers.add_parser(
        "export",
        help="export a document's chunks as LangChain or LlamaIndex JSONL",
        description="Chunk FILE under a policy and write the chunks as JSONL for a peer library.",
    )
    add_file_and_policy_options(parser)
    parser.add_argument("--shape", required=True, choices=EXPORT_SHAPES, help="peer shape")
    parser.add_argument("--model", metavar="DIR", help="model folder whose tokenizer counts")
    parser.add_argument("--out", metavar="FILE.jsonl", help="write here instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.render.export import export_jsonl

    check_out(args.out)
    policy = policy_of(args)
    doc = load_document(args.file, password=args.password)
    blocks = parse_document(doc, parser=args.parser).blocks
    chunks = chunk_document(doc, blocks, policy, load_tokenizer(args.model))
    text = export_jsonl(doc, chunks, args.shape)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"{len(chunks)} chunks of {doc.doc_id} ({policy.key}) as {args.shape} JSONL: {out}")
    return 0
