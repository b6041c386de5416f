"""``chunkscope import-run``: your retriever's log as a run, beside our methods.

``import-run TRACE --chunks NAME --queries QUERIES.jsonl`` reads what a retriever returned
per query (plain hits JSONL, a Ragas dataset, OpenInference retriever spans;
``core.evaluate.traces``), maps every hit to a chunk of the imported chunk set ``NAME``
(``chunkscope import-chunks``), and scores it against the labels as the method ``--name``
(default ``yours``), with ``--methods`` (default ``core.defaults.METHODS``: naive, late,
bm25; ``none`` for the log alone) computed over exactly the set's spans
(``core.evaluate.imported_run``). The documents are ``--docs`` or, by default, the store
library's versions the set was anchored in. The run prints as ``eval`` prints it, plus
what the import could not place; ``--out RUN.json`` saves it for ``triage``, ``check`` and
the Evaluate page, with each failure's suggested cause and its experiments
(``core.diagnose``), as ``eval --out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core import defaults
from core.cli import options
from core.cli.options import (
    add_embed_arguments,
    add_store_arguments,
    check_out,
    expand_docs,
    http_encoder_of,
    load_each,
    methods_help,
    parse_ks,
    parse_methods,
)
from core.cli.progress import ProgressBar
from core.cli.run_table import emit_run
from core.config import resolve_store
from core.diagnose.run_failures import suggest_run
from core.embed import VectorCache
from core.evaluate import read_queries
from core.evaluate.imported_run import import_run
from core.evaluate.traces import TraceError, read_trace
from core.formats import load_document
from core.imported import chunk_sets, sets_folder
from core.ingest.files import read_source
from core.library import Library
from core.methods.embedding import http_default_methods, require_usable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import-run",
        help="import your retriever's log (hits, Ragas, OpenInference) as a run to triage",
        description="Score a retriever's logged top-k against a labelled query set over an "
        "imported chunk set, beside our methods over the same spans.",
    )
    parser.add_argument("trace", metavar="TRACE", help="the retrieval log (JSONL or JSON)")
    parser.add_argument("--chunks", required=True, metavar="NAME", help="the imported chunk set")
    parser.add_argument("--queries", required=True, metavar="Q.jsonl", help="the labels")
    parser.add_argument(
        "--docs", nargs="+", metavar="PATH", default=[],
        help="the documents (default: the library's, as the set was anchored)",
    )  # fmt: skip
    parser.add_argument("--name", default="yours", help="the retriever's name in the run (yours)")
    parser.add_argument("--shape", choices=("hits", "ragas", "openinference"))
    parser.add_argument(
        "--methods",
        default=None,
        help=methods_help(
            f"default {defaults.methods_arg()}, or what an --embed-url server can run; "
            "none: the log alone"
        ),
    )  # fmt: skip
    parser.add_argument(
        "--k", default=defaults.ks_arg(),
        help=f"cut-offs for hit@k and recall@k ({defaults.ks_arg()})",
    )  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help="local model folder (default MiniLM)")
    parser.add_argument("--cache", metavar="DIR", help="keep vectors in DIR for the next run")
    parser.add_argument("--out", metavar="RUN.json", help="save the full run here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_store_arguments(parser)
    add_embed_arguments(parser)
    parser.set_defaults(func=run)


def _documents(args: argparse.Namespace, chunk_set: Any, location: Any) -> list[Any]:
    if args.docs:
        docs, failures = load_each(expand_docs(args.docs))
        if failures:
            raise TraceError(f"{len(failures)} of the --docs could not be read")
        return docs
    if location.path is None or not (location.path / "library").is_dir():
        raise TraceError("no library in this store: pass the documents with --docs")
    library = Library.in_folder(location.path / "library")
    docs = []
    for doc_id, sha in chunk_set.docs.items():
        entry = library.find(doc_id, sha)
        if entry is None:
            raise TraceError(
                f"the library does not keep {doc_id} at the version the set was anchored in: "
                "pass it with --docs"
            )
        docs.append(load_document(library.read(entry), name=entry.name))
    return docs


def run(args: argparse.Namespace) -> int:
    check_out(args.out)
    ks = parse_ks(args.k)
    location = resolve_store(args.store, args.chroma_host)
    sets = chunk_sets(sets_folder(location))
    if args.chunks not in sets:
        listed = ", ".join(sets) or "none: import one with `chunkscope import-chunks`"
        raise TraceError(
            f"no chunk set {args.chunks!r} in {location.describe()} (it has: {listed})"
        )
    chunk_set = sets[args.chunks]
    path = Path(args.trace)
    shape, trace = read_trace(read_source(path, str(path)), path.name, shape=args.shape)
    labels = read_queries(args.queries)

    remote = http_encoder_of(args) is not None  # checks the --embed-* flags before any work
    if args.methods is None and remote:
        methods: tuple[str, ...] = tuple(http_default_methods())
    else:
        asked = args.methods or defaults.methods_arg()
        methods = () if asked.strip().lower() == "none" else _methods(asked)
    if remote and methods:
        require_usable(methods)
    docs = _documents(args, chunk_set, location)
    encoder, embed, _ = options.load_model(args)  # looked up here: a test's seam
    cache = None
    if args.cache:
        cache = VectorCache(args.cache)
    bar = ProgressBar("indexing the set's spans") if methods else None
    try:
        result = import_run(
            trace, labels, chunk_set, docs, encoder=encoder, name=args.name, methods=methods,
            ks=ks, shape=shape, trace_name=path.name, embed=embed, cache=cache, progress=bar,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    # each failure's suggestion and experiments, kept with the run (in the store and --out)
    by_id = {d.doc_id: d for d in docs}
    result = suggest_run(result, by_id, encoder=encoder, embed=embed)[0]
    if emit_run(result, args):
        print_import(result.imported, sys.stdout)
    return 0


def _methods(text: str) -> tuple[str, ...]:
    return parse_methods(text) or ()


def print_import(info: Any, out: Any) -> None:
    """What the log held and what could not be placed, a line each (the first ten)."""
    unlabelled = info.get("unlabelled", [])
    outside = info.get("outside", [])
    print(
        f"\nlog {info['trace']} ({info['shape']}): {info['queries_in_trace']} queries, "
        f"{info['labelled']} labelled and scored, {len(unlabelled)} without a label (kept, "
        f"not scored); {info['hits']} hits, {len(outside)} outside chunk set "
        f"{info['chunk_set']}; depth {info['depth']}",
        file=out,
    )
    for item in outside[:10]:
        print(f"  {item['query_id']} rank {item['rank']}: {item['why']}", file=out)
    if len(outside) > 10:
        print(f"  ... and {len(outside) - 10} more (see --json)", file=out)
