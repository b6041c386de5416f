"""``chunkscope index PATH...``: chunk, embed and store files for later queries.

A PATH may be a folder (its files of every registered format, recursively). Each file is parsed
and chunked once and embedded once per method; versions already stored completely are
skipped. Progress goes to stderr, one summary line per document to stdout (``--json``:
one JSON object instead). The first Ctrl-C stops cleanly between batches (a re-run
finishes the job); a second one aborts at once. Exit status: 0 when every file was
indexed or skipped, 2 when any failed (each on its own line, the others indexed) or on
a usage error, 130 when stopped by Ctrl-C.

Without ``--methods``, every registered method is indexed (``core.methods``); a fusion
named in ``--methods`` is indexed as its parts.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable
from typing import Any

import core.embed
from core import defaults
from core import methods as registry
from core.cli.options import (
    add_model_arguments,
    add_policy_arguments,
    add_store_arguments,
    methods_help,
    parse_methods,
    policy_of,
)
from core.cli.progress import ProgressBar
from core.errors import ChunkscopeError
from core.formats import PARSERS, sha256_of
from core.formats.format_registry import describe_formats
from core.index.indexer import DocumentFile, collect_files, index_documents
from core.ingest.files import read_source
from core.library import Library
from core.scale.cli import add_ray_arguments, check_ray_arguments, print_ray_summary, run_ray
from core.store import ChunkStore


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index",
        help="chunk, embed and store files for querying",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    add_policy_arguments(parser, default=defaults.POLICY)
    parser.add_argument("--methods", help=methods_help("default: all; a fusion indexes its parts"))
    parser.add_argument("--parser", default="fast", help="block parser: fast or layout")
    add_model_arguments(parser)
    add_store_arguments(parser)
    parser.add_argument("--password", help="password of encrypted PDFs")
    parser.add_argument("--force", action="store_true", help="re-embed stored versions too")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")

    add_ray_arguments(parser)
    parser.set_defaults(func=run)


class _StopOnFirstInterrupt:
    """First SIGINT asks the run to stop between batches; the second raises at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> Callable[[], bool]:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return lambda: self.requested

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nstopping after the current batch (Ctrl-C again to abort)", file=sys.stderr)


def _progress_printer() -> Callable[[Any], None]:
    bars: dict[tuple[str, str | None, str], Any] = {}

    def show(event: Any) -> None:
        if event.stage not in ("embed", "store"):
            return
        key = (event.doc_id, event.method, event.stage)
        if key not in bars:
            label = f"[{event.doc_index + 1}/{event.n_docs}] {event.doc_id} {event.method}"
            bars[key] = ProgressBar(f"{label} {event.stage}")
        bars[key](event.done, event.total)

    return show


def summary_line(result: Any) -> str:
    if result.error:
        return f"{result.doc_id}: error: {result.error}"
    parts = [f"{result.doc_id}:"]
    if result.n_chunks is not None:
        parts.append(f"{result.n_chunks} chunk{'' if result.n_chunks == 1 else 's'}")
    if result.indexed:
        parts.append("indexed " + ",".join(result.indexed))
    if result.skipped:
        parts.append("already stored " + ",".join(result.skipped))
    truncated = {m: n for m, n in result.truncated_chunks.items() if n}
    if truncated:
        parts.append(
            "truncated " + ", ".join(f"{n} chunks under {m}" for m, n in truncated.items())
        )
    return " ".join(parts) + f" ({result.elapsed_s:.1f} s)"


def report_to_dict(report: Any, store_description: str) -> dict[str, object]:
    return {
        "model": report.model,
        "policy": report.policy.to_dict(),
        "methods": list(report.methods),
        "store": store_description,
        "cancelled": report.cancelled,
        "halted": report.halted,
        "elapsed_s": round(report.elapsed_s, 3),
        "documents": [
            {
                "doc_id": d.doc_id,
                "source": d.source,
                "sha256": d.sha256,
                "n_chunks": d.n_chunks,
                "indexed": list(d.indexed),
                "skipped": list(d.skipped),
                "truncated_chunks": dict(d.truncated_chunks),
                "error": d.error,
                "elapsed_s": round(d.elapsed_s, 3),
            }
            for d in report.documents
        ],
    }


def _keep_sources(store: Any, report: Any) -> None:
    """Add the bytes of every document that loaded to the store's library (the file is
    read again and kept only if it still has the bytes that were indexed)."""
    from pathlib import Path

    library = Library.of_store(store)
    for result in report.documents:
        if result.error or not result.sha256:
            continue
        data = read_source(Path(result.source), result.source)
        if sha256_of(data) == result.sha256:
            name = Path(result.source).name
            library.add(data, name=name, doc_id=result.doc_id, sha256=result.sha256)


def run(args: argparse.Namespace) -> int:
    policy = policy_of(args)

    methods = parse_methods(args.methods) or registry.base_methods()
    if args.parser not in PARSERS:
        raise ChunkscopeError(f"unknown parser {args.parser!r}: use {' or '.join(PARSERS)}")

    check_ray_arguments(args)
    files = collect_files(args.paths)
    if not files:
        raise ChunkscopeError(f"no documents ({describe_formats()}) under the given paths")
    if args.engine == "ray":
        return _run_on_ray(args, files, policy, methods)
    store = ChunkStore.open(args.store, host=args.chroma_host)

    # looked up when called, so a replaced loader (a test's small encoder) is the one used
    encoder = core.embed.load_encoder(args.model, pooling=args.pooling, device=args.device)
    docs = [DocumentFile(path=p, password=args.password) for p in files]
    with _StopOnFirstInterrupt() as should_cancel:
        report = index_documents(
            docs,
            policy=policy,
            methods=methods,
            encoder=encoder,
            store=store,
            parser=args.parser,
            progress=_progress_printer(),
            should_cancel=should_cancel,
            force=args.force,
        )
    _keep_sources(store, report)
    if args.json:
        json.dump(report_to_dict(report, store.location.describe()), sys.stdout)
        sys.stdout.write("\n")
    else:
        _print_report(report, len(docs), store.location.describe())
    return _exit_status(report, len(docs))


def _print_report(report: Any, n_files: int, store_description: str) -> None:
    for result in report.documents:
        print(summary_line(result))
    stopped = report.cancelled or report.halted
    state = "stopped early; run again to finish" if stopped else "done"
    print(
        f"{state}: {len(report.documents)}/{n_files} files, model {report.model}, "
        f"policy {report.policy.key}, store {store_description} ({report.elapsed_s:.1f} s)"
    )


def _run_on_ray(args: argparse.Namespace, files: list, policy: Any, methods: tuple) -> int:
    """``--engine ray`` (``core.scale``): the same report, plus per-stage throughput."""
    with _StopOnFirstInterrupt() as should_cancel:
        run, host = run_ray(args, files, policy, methods, should_cancel)
    report = run.report
    store = ChunkStore.open(host=host)
    _keep_sources(store, report)  # the Library lists them, their citations open anywhere
    where = store.location.describe()
    if args.json:
        print_ray_summary(run, report_to_dict(report, where))
    else:
        _print_report(report, len(files), where)
        print_ray_summary(run, None)
    return _exit_status(report, len(files))


def _exit_status(report: Any, n_files: int) -> int:
    failed = sum(1 for d in report.documents if d.error)
    if report.cancelled:
        return 130
    if report.halted:
        print(f"error: {report.halted}", file=sys.stderr)
        return 2
    if failed:
        print(
            f"error: {failed} of {n_files} files could not be indexed (see above)",
            file=sys.stderr,
        )
        return 2
    return 0
