"""``chunkscope eval``: score a labelled query set over a corpus, one column per method.

Every document given to ``--docs`` (files, or folders of documents) is chunked
under one policy and embedded once per method; each query is ranked against all chunks
(``--scope corpus``) or its own document's (``--scope doc``). Without ``--json`` a table:
metrics as rows, methods as columns, the query count of each row, then the deltas between
methods with their paired bootstrap 95% intervals. ``--json`` prints the run without the
per-query hits (``--out RUN.json`` saves the full run, hits included, for triage).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import core.embed
from core import methods as registry
from core.chunk import chunk_document
from core.cli.index_cmd import add_embed_arguments, http_encoder_of, methods_help, parse_methods
from core.cli.options import (
    add_policy_arguments,
    check_out,
    failed_files_line,
    load_each,
    policy_of,
)
from core.cli.progress import ProgressBar
from core.diagnose.run_failures import suggest_run
from core.embed import VectorCache
from core.errors import LabelError
from core.evaluate import EvalConfig, read_queries, run_eval, save_run
from core.evaluate.bootstrap import verdict
from core.evaluate.compare import metrics_by_doc
from core.evaluate.run_store import keep_run, runs_folder
from core.formats import parse_document
from core.formats.format_registry import describe_formats
from core.index.indexer import method_records
from core.index.sources import collect_files
from core.methods import EVALUATED
from core.methods.embedding import http_default_methods, require_usable
from core.model.tokens import load_tokenizer

DEFAULT_METHODS = ",".join(EVALUATED)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score a labelled query set: hit@k, recall@k, MRR, nDCG per method",
        description=(
            "Rank every query of a JSONL query set against the chunks of --docs under each "
            "method and print separate metrics per method, with query counts and paired "
            "bootstrap intervals for the differences."
        ),
    )
    parser.add_argument("--queries", required=True, metavar="Q.jsonl", help="query set")
    parser.add_argument(
        "--docs",
        required=True,
        nargs="+",
        metavar="PATH",
        help="documents, or folders of documents (" + describe_formats() + ")",
    )
    add_policy_arguments(parser, default="fixed")
    parser.add_argument("--parser", choices=("fast", "layout"), default="fast")
    parser.add_argument(
        "--methods",
        help=methods_help(f"default {DEFAULT_METHODS}; with --embed-url, those it can run"),
    )
    parser.add_argument("--k", default="1,5,10", help="cut-offs for hit@k and recall@k (1,5,10)")
    parser.add_argument("--model", metavar="DIR", help="local model folder (default MiniLM)")
    add_embed_arguments(parser)
    parser.add_argument(
        "--scope",
        choices=("corpus", "doc"),
        default="corpus",
        help="rank all chunks of --docs (corpus) or only the query's document (doc)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.95,
        help="share of evidence words an aligned span must hold (0.95)",
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--cache", metavar="DIR", help="keep vectors in DIR for the next run")
    parser.add_argument("--out", metavar="RUN.json", help="save the full run here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def parse_list(text: str, what: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise LabelError(f"give at least one value for {what}")
    return items


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(k) for k in parse_list(text, "--k"))
    except ValueError:
        raise LabelError(f"--k takes comma-separated positive integers, got {text!r}") from None
    if min(ks) < 1:
        raise LabelError("--k values must be at least 1")
    return ks


def expand_docs(paths: Sequence[str]) -> list[Path]:
    """The files ``index`` would read for the same paths (``core.index.sources.
    collect_files``: folders recursively, hidden folders skipped), so ``index DIR`` and
    ``eval --docs DIR`` read the same documents; a folder with none is a ``LabelError``."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise LabelError(f"{path} does not exist: check --docs")
        inside = collect_files([path])
        if path.is_dir() and not inside:
            raise LabelError(f"{path} holds no document ({describe_formats()})")
        found.extend(inside)
    return list(dict.fromkeys(found))


def load_model(args: argparse.Namespace) -> tuple[Any, Callable[..., Any], Any]:
    """``(encoder, method_records, tokenizer)`` for ``--model``, or for ``--embed-url``
    (the server encodes; the default model's tokenizer counts chunk tokens, torch is not
    loaded): the seam tests replace."""
    remote = http_encoder_of(args)
    if remote is not None:
        return remote, method_records, load_tokenizer(remote.model_dir)

    # torch (deterministic algorithms on) loads with the weights, at the first text
    # encoded: a run whose vectors are all cached imports neither.
    # looked up when called, so a replaced loader (a test's small encoder) is the one used
    encoder = core.embed.load_encoder(args.model, deterministic=True)
    return encoder, method_records, load_tokenizer(args.model)


def _config(args: argparse.Namespace) -> Any:
    if http_encoder_of(args) is not None:  # checks the --embed-* flags before any work
        methods = parse_methods(args.methods) or http_default_methods()
        require_usable(methods)
    else:
        methods = parse_methods(args.methods) or parse_methods(DEFAULT_METHODS) or ()
    policy = policy_of(args)
    try:
        return EvalConfig(
            policy=policy,
            methods=methods,
            ks=parse_ks(args.k),
            scope=args.scope,
            threshold=args.threshold,
            seed=args.seed,
            resamples=args.resamples,
        )
    except ValueError as exc:
        raise LabelError(str(exc)) from None


def doc_parts(parser: Any, policy: Any, tokenizer: Any) -> Callable[[Any], Any]:
    """``doc -> (blocks, chunks)``: the document's blocks, parsed once per document, and
    its chunks under ``policy`` (the run's chunker, and what its diagnosis reads)."""
    parsed: dict[str, Any] = {}

    def parts(doc: Any) -> Any:
        if doc.sha256 not in parsed:
            parsed[doc.sha256] = parse_document(doc, parser=parser).blocks
        blocks = parsed[doc.sha256]
        return blocks, chunk_document(doc, blocks, policy, tokenizer)

    return parts


def run(args: argparse.Namespace) -> int:
    config = _config(args)
    check_out(args.out)
    queries = read_queries(args.queries)
    paths = expand_docs(args.docs)
    docs, failures = load_each(paths)  # a bad file costs its line, not the run
    if not docs:
        raise LabelError(failed_files_line(failures, len(paths)))
    encoder, embed, tokenizer = load_model(args)

    parts = doc_parts(args.parser, config.policy, tokenizer)

    def chunks_of(doc: Any) -> Any:
        return parts(doc)[1]

    cache = None
    if args.cache:
        cache = VectorCache(args.cache)

    bar = ProgressBar(f"indexing ({', '.join(registry.needs_indexing(config.methods))})")
    try:
        result = run_eval(
            queries,
            docs,
            config,
            encoder=encoder,
            embed=embed,
            chunker=chunks_of,
            cache=cache,
            progress=bar,
        )
    finally:
        bar.close()
    if args.out:
        result = with_suggestions(result, docs, parts)
    emit_run(result, args)
    if failures:
        print(f"error: {failed_files_line(failures, len(paths))}", file=sys.stderr)
        return 2
    return 0


def with_suggestions(result: Any, docs: Sequence[Any], parts: Callable[..., Any]) -> Any:
    """The run with the diagnosis's suggested cause stored per failed query and method
    (``core.diagnose``), so ``diagnose``, ``check --max-new`` and triage exports read it."""
    return suggest_run(result, {d.doc_id: d for d in docs}, chunker=parts)[0]


def keep_in_store(result: Any, args: argparse.Namespace) -> Path:
    """Keep the run in the store's ``runs/`` folder (``--store``, else the default store),
    where the workbench finds it; ``--out`` is a copy."""
    return keep_run(result, runs_folder(getattr(args, "store", None)))


def emit_run(result: Any, args: argparse.Namespace) -> bool:
    """Save the run to ``--out`` when asked, then print it: one JSON object (without the
    per-query hits) with ``--json``, else the tables. Returns whether tables were printed."""
    kept = keep_in_store(result, args)
    print(f"kept {result.run_id} in {kept.parent} (the workbench's Evaluate lists it)",
          file=sys.stderr)  # fmt: skip
    if args.out:
        save_run(result, args.out)
        print(f"saved {result.run_id} to {args.out}", file=sys.stderr)
    if args.json:
        json.dump(result.to_dict(with_hits=False), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return False
    print_run(result, sys.stdout)
    return True


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _delta_cell(delta: Any) -> str:
    if delta is None:
        return "-"

    mark = "*" if verdict(delta) == "clear" else "?" if delta.excludes_zero else " "
    return f"{delta.delta:+.3f} [{delta.low:+.3f}, {delta.high:+.3f}]{mark}"


def print_run(run: Any, out: TextIO) -> None:
    """The metric table (methods as columns, query count per row) and the deltas table."""
    policy = run.policy_label
    print(f"{run.run_id}  model {run.model}  policy {policy}  scope {run.scope}", file=out)
    print(
        f"queries {run.n_queries} scored, {len(run.unresolved)} unresolved; "
        f"precision/iou/validity/duplicates at k={run.text_k}; failed = miss@{run.text_k}",
        file=out,
    )
    names = list(run.metrics[run.methods[0]])
    width = max(len(n) for n in names) + 2
    cols = {m: max(12, len(m) + 2) for m in run.methods}  # fusion names are long
    heads = "".join(f"{m:>{cols[m]}}" for m in run.methods)
    print(f"{'metric':<{width}}{heads}{'n':>8}", file=out)
    for name in names:
        counts = sorted({run.n[m][name] for m in run.methods})
        shown = "/".join(str(c) for c in counts)
        cells = "".join(f"{_cell(run.metrics[m][name]):>{cols[m]}}" for m in run.methods)
        print(f"{name:<{width}}{cells}{shown:>8}", file=out)
    if run.deltas:
        pairs = list(run.deltas)
        print(
            f"\ndeltas with paired bootstrap 95% intervals ({run.resamples} resamples, "
            f"seed {run.seed}); * = interval excludes 0 on 30+ queries, "
            "? = excludes 0 on fewer (likely, not yet sure)",
            file=out,
        )
        wide = {p: max(28, len(p) + 2) for p in pairs}
        print(f"{'metric':<{width}}" + "".join(f"{p:>{wide[p]}}" for p in pairs), file=out)
        for name in names:
            cells = "".join(f"{_delta_cell(run.deltas[p].get(name)):>{wide[p]}}" for p in pairs)
            print(f"{name:<{width}}{cells}", file=out)
    print_by_doc(run, out)
    failed = ", ".join(f"{m} {sum(q.failed[m] for q in run.queries)}" for m in run.methods)
    print(f"\nfailed queries: {failed}", file=out)
    if run.unresolved:
        print(f"unresolved ({len(run.unresolved)}):", file=out)
        for item in run.unresolved[:10]:
            print(f"  {item.query_id} ({item.doc}): {item.reason}", file=out)
        if len(run.unresolved) > 10:
            print(f"  ... and {len(run.unresolved) - 10} more (see --json)", file=out)
    if run.timings:
        print("time " + ", ".join(f"{k} {v:.1f}" for k, v in run.timings.items()), file=out)


def print_by_doc(run: Any, out: TextIO) -> None:
    """hit@text_k / mrr per gold document, when the queries span several documents."""
    rows = metrics_by_doc(run)
    if len(rows) < 2:
        return
    hit = f"hit@{run.text_k}"
    width = max(len(r.doc_id) for r in rows) + 2
    cols = {m: max(14, len(m) + 2) for m in run.methods}
    print(f"\nper document ({hit} / mrr)", file=out)
    heads = "".join(f"{m:>{cols[m]}}" for m in run.methods)
    print(f"{'document':<{width}}{heads}{'n':>8}", file=out)
    for row in rows:
        cells = "".join(
            f"{_cell(row.metrics[m][hit]) + '/' + _cell(row.metrics[m]['mrr']):>{cols[m]}}"
            for m in run.methods
        )
        print(f"{row.doc_id:<{width}}{cells}{row.n_queries:>8}", file=out)
