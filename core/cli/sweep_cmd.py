"""``chunkscope sweep``: evaluate every (policy, size, overlap, method) cell of a grid.

Each point of the grid is the evaluation ``chunkscope eval`` runs for that policy (same
flags, same numbers); the points share one vector cache, so late chunking computes a
document's token states once and pools them for every later point. Without ``--json`` a
table: one row per cell with hit@k, MRR, nDCG@10 and the method's index cost at that point
(vectors, tokens through the encoder, seconds). Every sweep is kept as it grows (every
point's full run) in the store folder's ``sweeps/`` (``core.tune.store_sweeps_dir``), where
the Tune page lists it; ``--out SWEEP.json`` saves a copy there too, and a second call
with the same inputs and ``--out`` resumes it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from core import defaults
from core.chunk import policy_registry as registry
from core.chunk.live_names import split_names
from core.cli import options
from core.cli.options import (
    check_out,
    eval_config,
    expand_docs,
    failed_files_line,
    load_each,
    methods_help,
)
from core.cli.progress import ProgressBar
from core.cli.run_table import cell
from core.embed import VectorCache
from core.embed.cache import shared_cache
from core.errors import LabelError
from core.evaluate import read_queries
from core.formats import parse_document
from core.formats.format_registry import describe_formats
from core.tune import (
    load_sweep,
    parse_grid,
    parse_overlaps,
    parse_sizes,
    run_sweep,
    save_sweep,
    store_sweeps_dir,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="evaluate a grid of chunk sizes and overlaps under several methods",
        description=(
            "Run `eval` for every (policy, size, overlap) of the grid and every method, "
            "save one sweep file and print one row per cell."
        ),
    )
    parser.add_argument("--queries", required=True, metavar="Q.jsonl", help="query set")
    parser.add_argument(
        "--docs", required=True, nargs="+", metavar="PATH",
        help="documents, or folders of documents (" + describe_formats() + ")",
    )  # fmt: skip
    parser.add_argument(
        "--policy", default=defaults.POLICY,
        help="comma list of " + ", ".join(registry.policy_names())
        + ", or your own splitter: langchain:CLASS, llamaindex:CLASS, chonkie:CLASS, "
        f"py:package.module:factory ({defaults.POLICY})",
    )  # fmt: skip
    parser.add_argument("--size", required=True, help="chunk sizes in --unit: 64,128,256,512")
    parser.add_argument(
        "--overlap", default="0", help="overlaps: counts in --unit or shares of the size (0,10%%)"
    )
    parser.add_argument("--unit", choices=registry.all_units())
    parser.add_argument("--parser", choices=("fast", "layout"), default="fast")
    default = defaults.methods_arg()
    parser.add_argument("--methods", default=default, help=methods_help(f"default {default}"))
    parser.add_argument(
        "--k", default=defaults.ks_arg(),
        help=f"cut-offs for hit@k and recall@k ({defaults.ks_arg()})",
    )  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help="local model folder (default MiniLM)")
    parser.add_argument("--scope", choices=("corpus", "doc"), default="corpus")
    parser.add_argument("--threshold", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--cache", metavar="DIR", help="keep vectors and late token states in DIR")
    parser.add_argument("--out", metavar="SWEEP.json", help="save (and resume) the sweep here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _grid(args: argparse.Namespace) -> list[Any]:
    policies = split_names(args.policy)  # a splitter's parameters may hold commas
    return parse_grid(policies, parse_sizes(args.size), parse_overlaps(args.overlap), args.unit)


def _previous(path: str | None) -> Any:
    from pathlib import Path

    return load_sweep(path) if path and Path(path).is_file() else None


@contextmanager
def _cache(folder: str | None) -> Iterator[Any]:
    """``--cache DIR`` keeps vectors and states there; without it, the one on-disk cache
    every command and page shares (``core.embed.cache.shared_cache``); with that switched
    off, late token states live in a temporary folder for the sweep's length (so every
    document's states survive between points, however many documents there are)."""
    if folder:
        yield VectorCache(folder)
        return
    shared = shared_cache()
    if shared is not None:
        yield shared
        return
    with tempfile.TemporaryDirectory(prefix="chunkscope-states-") as states:
        yield VectorCache(state_folder=states)


def run(args: argparse.Namespace) -> int:
    grid = _grid(args)
    template = eval_config(args, policy=grid[0].policy)  # each point: its own policy
    check_out(args.out)
    previous = _previous(args.out)
    queries = read_queries(args.queries)
    paths = expand_docs(args.docs)
    docs, failures = load_each(paths)
    if not docs:
        raise LabelError(failed_files_line(failures, len(paths)))
    encoder, embed, tokenizer = options.load_model(args)  # looked up here: a test's seam
    bars: dict[int, ProgressBar] = {}

    def progress(point: int, points: int, done: int, total: int) -> None:
        if point not in bars:
            for bar in bars.values():
                bar.close()
            bars[point] = ProgressBar(f"point {point + 1}/{points} {grid[point].policy.key}")
        bars[point](done, total)

    try:
        with _cache(args.cache) as cache:
            sweep = run_sweep(
                queries,
                docs,
                grid,
                template,
                encoder=encoder,
                embed=embed,
                parse=lambda doc: parse_document(doc, parser=args.parser).blocks,
                tokenizer=tokenizer,
                cache=cache,
                progress=progress,
                resume=previous,
                on_point=lambda s: _keep(s, args.out),
            )
    finally:
        for bar in bars.values():
            bar.close()
    kept = _keep(sweep, args.out)
    print(f"saved {sweep.sweep_id} to {args.out or kept} (the Tune page lists it)", file=sys.stderr)
    if args.json:
        json.dump(sweep_json(sweep), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_sweep(sweep, sys.stdout)
    if failures:
        print(f"error: {failed_files_line(failures, len(paths))}", file=sys.stderr)
        return 2
    return 0


def _keep(sweep: Any, out: str | None) -> Any:
    """Save the sweep in the store's ``sweeps/`` (the Tune page's list) and to ``out``."""
    if out:
        save_sweep(sweep, out)
    return save_sweep(sweep, store_sweeps_dir() / f"{sweep.sweep_id}.json")


def sweep_json(sweep: Any) -> dict[str, object]:
    """The sweep as scripts read it: one object per cell, no per-query hits."""
    return {
        "sweep_id": sweep.sweep_id,
        "model": sweep.model,
        "identity": dict(sweep.identity),
        "grid": dict(sweep.grid),
        "timings": dict(sweep.timings),
        "cells": [
            {
                "policy": c.policy.to_dict() | {"key": c.policy.key},
                "overlap_asked": c.overlap_asked,
                "method": c.method,
                "run_id": c.run_id,
                "metrics": dict(c.metrics),
                "n": dict(c.n),
                "cost": c.cost.to_dict(),
            }
            for c in sweep.cells()
        ],
    }


def _shown_metrics(sweep: Any) -> list[str]:
    ks = sweep.identity["ks"]
    return [f"hit@{k}" for k in ks] + ["mrr", "ndcg@10"]


def print_sweep(sweep: Any, out: TextIO) -> None:
    """One row per cell: policy, method, the main metrics, index cost."""
    names = _shown_metrics(sweep)
    cells = sweep.cells()
    pw = max(len(c.policy.key) for c in cells) + 2
    mw = max(len(c.method) for c in cells) + 2
    print(f"{sweep.sweep_id}  model {sweep.model}  scope {sweep.identity['scope']}", file=out)
    queries = sweep.points[0].run.n_queries if sweep.points else 0
    print(f"{len(sweep.points)} points x {len(sweep.methods)} methods, {queries} queries", file=out)
    head = "".join(f"{n:>9}" for n in names)
    print(f"{'policy':<{pw}}{'method':<{mw}}{head}{'vectors':>9}{'tokens':>10}{'s':>8}", file=out)
    for c in cells:
        values = "".join(f"{cell(c.metrics.get(n)):>9}" for n in names)
        tokens = "-" if c.cost.tokens_encoded is None else str(c.cost.tokens_encoded)
        print(
            f"{c.policy.key:<{pw}}{c.method:<{mw}}{values}{c.cost.vectors:>9}{tokens:>10}"
            f"{c.cost.seconds:>8.2f}",
            file=out,
        )
    print(f"time total_s {sweep.timings.get('total_s', 0.0):.1f}", file=out)
