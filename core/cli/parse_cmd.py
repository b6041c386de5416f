"""``chunkscope parse FILE``: load one file and print its typed blocks.

With ``--json`` one object is printed: ``{"document": {...}, "blocks": [...]}``, the
document as ``core.formats.document_to_dict`` makes it (``"text"`` only with
``--with-text``) and each block as ``{"kind", "level", "char_start", "char_end", "page",
"bbox", "heading_path", "header_rows", "text"}`` (``header_rows``: a table's column-heading
rows as ``[start, end]`` spans; ``page`` is 1-based, ``null`` for reflowable text;
``bbox`` is ``[x0, y0, x1, y1]`` in points, origin top left of the rendered page, or
``null``). Without ``--json``: a table (kind, page, span, first words) and a summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from core.cli.progress import ProgressBar
from core.formats import document_to_dict, load_document, parse_document
from core.formats.format_registry import describe_formats

_PREVIEW_CHARS = 60


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="show the typed blocks of a document",
        description="Load FILE and print its typed blocks with their exact character spans.",
    )
    parser.add_argument("file", metavar="FILE", help="a document: " + describe_formats())
    parser.add_argument("--password", help="password of an encrypted PDF")
    parser.add_argument(
        "--parser",
        choices=("fast", "layout", "fast+layout"),
        default="fast",
        help="fast heuristics (default), PyMuPDF's layout model (slower, PDFs only), or the "
        "fast parser with the layout model's tables on the pages where columns are left "
        "untyped",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--with-text", action="store_true", help="include the document's full text (JSON)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    started = time.perf_counter()
    doc = load_document(args.file, password=args.password)
    loaded = time.perf_counter()
    modelled = args.parser != "fast" and doc.is_paged
    bar = ProgressBar("layout model, pages") if modelled else None
    result = parse_document(doc, parser=args.parser, progress=bar)
    if args.json:
        payload = {
            "document": document_to_dict(doc, with_text=args.with_text),
            "blocks": [block_to_dict(block, paged=doc.is_paged) for block in result.blocks],
        }
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print_blocks(result.blocks, sys.stdout)
    pages = len(doc.pages)
    missing = doc.pages_without_text
    summary = (
        f"{doc.doc_id}: {doc.kind}, "
        + (f"{pages} pages, " if doc.is_paged else "reflowable (no pages), ")
        + f"{len(doc.text)} chars, {len(result.blocks)} blocks"
    )
    if doc.is_paged:
        summary += f", pages without text: {_page_list(missing)}"
    summary += f"; load {loaded - started:.2f} s, parse ({result.parser}) {result.elapsed_s:.2f} s"
    if result.parser == "fast+layout":
        summary += (
            f" (layout model on {len(result.model_pages)} pages: {_page_list(result.model_pages)},"
            f" {result.model_s:.2f} s)"
        )
    print(summary)
    return 0


def block_to_dict(block, *, paged: bool) -> dict[str, object]:  # noqa: ANN001
    """One block as the JSON contract names it (a transcript turn adds ``speaker``,
    ``start_s`` and ``end_s``)."""
    out: dict[str, object] = {
        "kind": block.kind,
        "level": block.level,
        "char_start": block.char_start,
        "char_end": block.char_end,
        "page": block.page if paged and block.page else None,
        "bbox": [round(v, 2) for v in block.bbox_pt] if block.bbox_pt is not None else None,
        "heading_path": list(block.heading_path),
        "header_rows": [list(span) for span in block.header_rows],
        "text": block.text,
    }
    if block.start_s is not None:
        out.update(speaker=block.speaker, start_s=block.start_s, end_s=block.end_s)
    return out


def print_blocks(blocks, out: TextIO) -> None:  # noqa: ANN001
    out.write(f"{'kind':<9} {'lvl':>3} {'page':>4} {'span':>17}  text\n")
    for block in blocks:
        preview = " ".join(block.text.split())
        if len(preview) > _PREVIEW_CHARS:
            preview = preview[: _PREVIEW_CHARS - 1] + "…"
        page = str(block.page) if block.page else "-"
        level = str(block.level) if block.level else ""
        span = f"{block.char_start}-{block.char_end}"
        out.write(f"{block.kind:<9} {level:>3} {page:>4} {span:>17}  {preview}\n")


def _page_list(numbers: tuple[int, ...]) -> str:
    if not numbers:
        return "none"
    return ", ".join(str(n) for n in numbers)
