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
import functools
import sys
from typing import Any

from core import defaults
from core import methods as registry
from core.cli import options
from core.cli.options import (
    add_embed_arguments,
    add_policy_arguments,
    check_out,
    doc_parts,
    eval_config,
    expand_docs,
    failed_files_line,
    load_each,
    methods_help,
    with_suggestions,
)
from core.cli.progress import ProgressBar
from core.cli.run_table import emit_run
from core.embed import VectorCache
from core.embed.cache import shared_cache
from core.errors import LabelError
from core.evaluate import read_queries, run_eval
from core.formats.format_registry import describe_formats


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
    add_policy_arguments(parser, default=defaults.POLICY)
    parser.add_argument("--parser", choices=("fast", "layout"), default="fast")
    parser.add_argument(
        "--methods",
        help=methods_help(f"default {defaults.methods_arg()}; with --embed-url, those it can run"),
    )
    parser.add_argument(
        "--k", default=defaults.ks_arg(),
        help=f"cut-offs for hit@k and recall@k ({defaults.ks_arg()})",
    )  # fmt: skip
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


def run(args: argparse.Namespace) -> int:
    config = eval_config(args)
    check_out(args.out)
    queries = read_queries(args.queries)
    paths = expand_docs(args.docs)
    docs, failures = load_each(paths)  # a bad file costs its line, not the run
    if not docs:
        raise LabelError(failed_files_line(failures, len(paths)))
    encoder, embed, tokenizer = options.load_model(args)  # looked up here: a test's seam

    parts = doc_parts(args.parser, config.policy, tokenizer)

    def chunks_of(doc: Any) -> Any:
        return parts(doc)[1]

    # the run's cache (run_eval's own default when not given), also read by the repairs
    cache = VectorCache(args.cache) if args.cache else shared_cache()

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
    # every run is kept in the store, where the reader reads each failure's suggestion; the
    # repairs read the run's vectors and late token states from its cache, not anew
    repairs = functools.partial(embed, cache=cache) if cache is not None else embed
    result = with_suggestions(result, docs, parts, encoder=encoder, embed=repairs)
    emit_run(result, args)
    if failures:
        print(f"error: {failed_files_line(failures, len(paths))}", file=sys.stderr)
        return 2
    return 0
