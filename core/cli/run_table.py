"""A run as the commands print it: ``--out`` and ``--json`` handled in one place
(``emit_run``), the metric table (methods as columns, the query count of each row), the
deltas with their paired bootstrap intervals, the per-document table, and the one format
of a metric value (``cell``) that ``eval``, ``sweep``, ``check`` and ``import-run`` share."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from core.evaluate import save_run
from core.evaluate.bootstrap import verdict
from core.evaluate.compare import metrics_by_doc
from core.evaluate.run_store import keep_run, runs_folder


def keep_in_store(result: Any, args: argparse.Namespace) -> Path:
    """Keep the run in the store's ``runs/`` folder (``--store``, else the default store),
    where the workbench finds it; ``--out`` is a copy."""
    return keep_run(result, runs_folder(getattr(args, "store", None)))


def emit_run(result: Any, args: argparse.Namespace) -> bool:
    """Keep the run in the store, save a copy to ``--out`` when asked, then print it: one
    JSON object (without the per-query hits) with ``--json``, else the tables. Returns
    whether tables were printed."""
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


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def delta_cell(delta: Any) -> str:
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
        cells = "".join(f"{cell(run.metrics[m][name]):>{cols[m]}}" for m in run.methods)
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
            cells = "".join(f"{delta_cell(run.deltas[p].get(name)):>{wide[p]}}" for p in pairs)
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
            f"{cell(row.metrics[m][hit]) + '/' + cell(row.metrics[m]['mrr']):>{cols[m]}}"
            for m in run.methods
        )
        print(f"{row.doc_id:<{width}}{cells}{row.n_queries:>8}", file=out)
