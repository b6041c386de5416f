"""``chunkscope import-chunks``: the chunks a pipeline already made, anchored and audited.

``import-chunks FILE --docs PATH...`` reads LangChain Documents, LlamaIndex TextNodes or
plain chunk rows (JSONL or a JSON list; the shape is sniffed unless ``--shape`` names
it); ``import-chunks --chroma DIR|HOST:PORT --collection NAME --docs PATH...`` reads a
Chroma collection as LangChain's or LlamaIndex's integration wrote it. Each chunk is
anchored in its document's canonical text and its claimed offset and page audited
(``core.imported``); the set is kept in the store under ``--name`` (default: the file or
collection name), replacing a set of that name, and every page and command then offers
it as a policy of that name. The documents are added to the store's library, so the
workbench opens them.

A PDF's chunks from a per-page loader are checked in that loader's own text of each page
(pypdf for LangChain's PyPDFLoader and LlamaIndex's PDFReader, PyMuPDF for
PyMuPDFLoader): found from the rows' metadata or by trial, or named by ``--extractor``.
The loader's page texts are kept in the store (``loader_text/`` beside ``chunksets/``,
by document SHA-256 and extractor version), so importing another split of the same PDFs
checks its claims without extracting the pages again.

Output: what was checked (``core.imported.headline``), the counts and the first chunks to
look at, one line each (``--json``: the report of ``core.imported.report_dict`` with the
time spent anchoring). Exit status 0
when the set was kept, 2 on an input that cannot be read (one line; nothing is kept).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.cli.options import add_store_arguments, expand_docs, load_each
from core.config import resolve_store
from core.formats import load_document
from core.imported import (
    EXTRACTORS,
    ImportChunksError,
    check_name,
    headline,
    import_chunks,
    read_chroma,
    read_file,
    report_dict,
    save_chunk_set,
    sets_folder,
)
from core.imported.chunkset import name_from
from core.imported.loader_text import FOLDER_NAME as LOADER_FOLDER
from core.imported.named_splitter import offer_line
from core.ingest.files import read_source
from core.library import Library
from core.store import ChunkStore

_SHOWN_PROBLEMS = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import-chunks",
        help="import your pipeline's chunks (LangChain, LlamaIndex, Chroma): anchor, audit, keep",
        description="Anchor chunks made elsewhere in the canonical text, audit the offsets "
        "they claim, and keep them as a chunk set (a policy of that name).",
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a JSONL or JSON file of chunks")
    parser.add_argument(
        "--chroma", metavar="DIR|HOST:PORT", help="read a Chroma collection instead of a file"
    )
    parser.add_argument("--collection", metavar="NAME", help="the collection, with --chroma")
    parser.add_argument(
        "--docs", nargs="+", metavar="PATH", default=[],
        help="the documents the chunks came from (files or folders; the library's too)",
    )  # fmt: skip
    parser.add_argument("--shape", choices=("langchain", "llamaindex", "chunks"))
    parser.add_argument("--name", help="name of the chunk set (default: from the file)")
    parser.add_argument("--source-key", metavar="KEY", help="metadata key naming the document")
    parser.add_argument("--start-key", metavar="KEY", help="metadata key of the claimed offset")
    parser.add_argument("--page-key", metavar="KEY", help="metadata key of the page")
    parser.add_argument(
        "--page-base", type=int, choices=(0, 1),
        help="number of the first page in the import (LangChain 0, others 1)",
    )  # fmt: skip
    parser.add_argument(
        "--extractor", choices=EXTRACTORS,
        help="the text your per-page loader read (pypdf: PyPDFLoader, PDFReader; pymupdf: "
        "PyMuPDFLoader); default: from the rows' metadata, else tried",
    )  # fmt: skip
    parser.add_argument(
        "--threshold", type=float, default=0.9,
        help="share of a chunk's words an aligned span must hold (default 0.9)",
    )  # fmt: skip
    add_store_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)


def _read(args: argparse.Namespace) -> tuple[str, str, list[Any]]:
    keys = {"source": args.source_key, "start": args.start_key, "page": args.page_key,
            "page_base": args.page_base}  # fmt: skip
    if args.chroma is not None:
        if args.file is not None:
            raise ImportChunksError("give a FILE or --chroma, not both")
        if not args.collection:
            raise ImportChunksError("--chroma needs --collection NAME")
        shape, chunks = read_chroma(args.chroma, args.collection, keys=keys)
        return shape, f"chroma:{args.chroma}/{args.collection}", chunks
    if args.file is None:
        raise ImportChunksError(
            "give a FILE of chunks, or --chroma DIR|HOST:PORT --collection NAME"
        )
    path = Path(args.file)
    data = read_source(path, str(path))
    shape, chunks = read_file(data, path.name, shape=args.shape, keys=keys)
    return shape, path.name, chunks


def _library_docs(store_dir: Path | None, have: set[str]) -> list[Any]:
    """The current version of every library document not among ``have`` (by doc_id)."""
    if store_dir is None or not (store_dir / "library").is_dir():
        return []
    library = Library.in_folder(store_dir / "library")
    docs = []
    for entry in library.current():
        if entry.doc_id in have or entry.encrypted:
            continue
        docs.append(load_document(library.read(entry), name=entry.name))
    return docs


def _keep_sources(args: argparse.Namespace, docs: list[Any], paths: list[Path]) -> None:
    """Add the given files to the store's library (the workbench opens them from there)."""
    by_path = {str(p): p for p in paths}
    store = ChunkStore.open(args.store, host=args.chroma_host)
    library = Library.of_store(store)
    for doc in docs:
        path = by_path.get(doc.source)
        if path is not None:
            library.add(read_source(path, str(path)), name=path.name, doc_id=doc.doc_id,
                        sha256=doc.sha256)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    shape, origin, chunks = _read(args)
    name = check_name(args.name or name_from(args.collection or origin))
    location = resolve_store(args.store, args.chroma_host)
    paths = expand_docs(args.docs) if args.docs else []
    docs, failures = load_each(paths)
    if failures:
        raise ImportChunksError(f"{len(failures)} of the --docs could not be read; nothing kept")
    docs += _library_docs(location.path, {d.doc_id for d in docs})
    if not docs:
        raise ImportChunksError("no documents: give --docs PATH... (or index them first)")
    chunk_set, timing = import_chunks(
        chunks, docs, name=name, shape=shape, origin=origin, threshold=args.threshold,
        extractor=args.extractor, page_base=args.page_base,
        loader_folder=sets_folder(location).parent / LOADER_FOLDER,
    )  # fmt: skip
    used = [d for d in docs if d.doc_id in chunk_set.docs]
    _keep_sources(args, used, paths)
    folder = sets_folder(location)
    save_chunk_set(folder, chunk_set)
    report = report_dict(chunk_set, used)
    report["anchor_s"] = round(timing.anchor_s, 4)
    kept_in = str(folder / f"{name}.json")
    report["kept_in"] = kept_in
    if args.json:
        json.dump(report, sys.stdout)
        sys.stdout.write("\n")
    else:
        _print(chunk_set, timing, kept_in)
    return 0


def _print(chunk_set: Any, timing: Any, where: str) -> None:
    counts = chunk_set.counts()
    total = len(chunk_set.chunks)
    rate = f"{timing.anchor_s * 1000 / max(timing.chunks, 1):.2f} s per 1,000 chunks"
    print(f"chunk set {chunk_set.name}: {total:,} chunks from {chunk_set.origin} "
          f"({chunk_set.shape}), {len(chunk_set.docs)} document"
          f"{'' if len(chunk_set.docs) == 1 else 's'}; anchored and checked in "
          f"{timing.anchor_s:.2f} s ({rate})")  # fmt: skip
    for line in headline(chunk_set):
        print(f"  {line}")
    for label, key in (("anchor", "anchor"), ("claim", "claim"), ("page", "page_claim")):
        parts = ", ".join(f"{kind} {n:,}" for kind, n in counts[key].items())
        print(f"  {label:<7}{parts}")
    problems = [
        c for c in chunk_set.chunks
        if "wrong" in (c.anchor.claim, c.anchor.page_claim)
        or c.anchor.anchor in ("missing", "ambiguous")
    ]  # fmt: skip
    for chunk in problems[:_SHOWN_PROBLEMS]:
        a = chunk.anchor
        label = f" ({chunk.given.foreign_id})" if chunk.given.foreign_id else ""
        print(f"  chunk {a.index + 1}{label}, {a.doc_id or chunk.given.source}: "
              f"{a.anchor}, claim {a.claim}, page {a.page_claim}: {a.detail}")  # fmt: skip
    if len(problems) > _SHOWN_PROBLEMS:
        print(f"  ... and {len(problems) - _SHOWN_PROBLEMS:,} more (--json lists every chunk)")
    print(f"kept as policy {chunk_set.name!r} in {where}")
    if named := chunk_set.checks.get("splitter"):
        print(f"{offer_line(named)}.")
