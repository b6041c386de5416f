"""``chunkscope import-run``: your retriever's log as a run, beside our methods.

``import-run TRACE --chunks NAME --queries QUERIES.jsonl`` reads what a retriever returned
per query (plain hits JSONL, a Ragas dataset, OpenInference retriever spans;
``core.evaluate.traces``), maps every hit to a chunk of the imported chunk set ``NAME``
(``chunkscope import-chunks``), and scores it against the labels as the method ``--name``
(default ``yours``), with ``--methods`` (default ``core.defaults.METHODS``: naive, late,
bm25; ``none`` for the log alone) computed over exactly the set's spans
(``core.evaluate.imported_run``). The documents are ``--docs`` or, by default, the store
library's versions the set was anchored in. A set imported in the workbench whose offset
and page claims are still pending (``core.imported.claim_check``) is checked first, and
kept checked: a run made here is never scored over unchecked claims.

Your failures first, ours after: the run with your retriever alone is scored, each failure
diagnosed (``core.diagnose``), and kept in the store's ``runs/`` at once (stderr says
where, and ``chunkscope open`` on it reads its failures while ours are computed); then our
methods are computed and added to the same run (same ``run_id``, same file), every
failure diagnosed again. Interrupted (Ctrl-C) while ours are computed, the kept run stays
your retriever's, recording the methods that were never added (``pending_methods``,
state ``stopped``), and the command exits 130. The run prints once, at the end, as
``eval`` prints it, plus what the import could not place; ``--out RUN.json`` writes a copy
for ``triage``, ``check`` and the Evaluate page.
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
from core.cli.run_table import emit_run, keep_in_store
from core.config import resolve_store
from core.diagnose.import_job import AddMethods
from core.diagnose.run_failures import suggest_run
from core.embed import VectorCache
from core.evaluate import EvalRun, read_queries, save_run
from core.evaluate.imported_run import LogImport, pending_state, with_pending
from core.evaluate.traces import TraceError, read_trace
from core.formats import load_document
from core.imported import chunk_sets, save_chunk_set, sets_folder
from core.imported.claim_check import check_claims, is_pending
from core.imported.loader_text import FOLDER_NAME as LOADER_FOLDER
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
    if is_pending(chunk_set):  # imported in the workbench, its check not finished there
        print(f"chunk set {chunk_set.name}: its offsets and pages were pending; checking them "
              "in the loader's text first…", file=sys.stderr)  # fmt: skip
        chunk_set = check_claims(chunk_set, docs,
                                 folder=sets_folder(location).parent / LOADER_FOLDER)  # fmt: skip
        save_chunk_set(sets_folder(location), chunk_set)
    encoder, embed, _ = options.load_model(args)  # looked up here: a test's seam
    cache = None
    if args.cache:
        cache = VectorCache(args.cache)
    found = LogImport(trace, labels, chunk_set, docs, name=args.name, shape=shape,
                      trace_name=path.name)  # fmt: skip
    ours = found.ours(methods)
    # yours first: scored, diagnosed and kept, so its failures can be read at once
    first = found.run(encoder=encoder, ks=ks, embed=embed, cache=cache)
    first = suggest_run(with_pending(first, ours), found.docs, chunker=found.parts,
                        encoder=encoder, embed=embed)[0]  # fmt: skip
    if not ours:
        if emit_run(first, args):
            print_import(first.imported, sys.stdout)
        return 0
    kept = keep_in_store(first, args)
    failed = sum(q.failed[args.name] for q in first.queries)
    print(
        f"kept {first.run_id} in {kept.parent} with {args.name} alone ({first.n_queries} "
        f"queries, {failed} failed{', each with its suggested cause' if failed else ''}); "
        f"read it now: chunkscope open {kept}",
        file=sys.stderr,
    )
    print(
        f"adding {', '.join(ours)} to {first.run_id}, computed over the set's spans (Ctrl-C "
        f"stops them; the run with {args.name} stays)",
        file=sys.stderr,
    )
    bar = ProgressBar(f"{', '.join(ours)}: the set's spans")

    def keep(run: EvalRun) -> None:  # a stopped run; emit_run keeps and writes a grown one
        if pending_state(run) == "stopped":
            keep_in_store(run, args)
            if args.out:
                save_run(run, args.out)

    adding = AddMethods(found=found, first=first, methods=ours, encoder=encoder, keep=keep,
                        ks=ks, embed=embed, cache=cache, on_progress=bar)  # fmt: skip
    try:
        result = adding.run()
    finally:
        bar.close()
    if adding.result is None:
        saved = f", and {args.out}" if args.out else ""
        why = "stopped" if adding.stopped else f"error: {adding.error}"
        print(
            f"{why}: {', '.join(ours)} were not added; {first.run_id} keeps {args.name} alone "
            f"(in {kept.parent}{saved}): import the run again to add them",
            file=sys.stderr,
        )
        return 130 if adding.stopped else 2
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
