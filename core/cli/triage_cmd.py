"""``chunkscope triage``: read failures of a saved run, tag their causes, export them.

- ``triage sample RUN.json [--n 20] [--seed 0] [--method M]``: a reproducible sample of
  failed queries (no gold chunk in the run's top k), each with its gold text and what was
  retrieved instead;
- ``triage tag RUN.json QUERY_ID CAUSE [--note TEXT]``: tag one query (tagging again
  replaces the cause; the note is kept unless a new one is given);
- ``triage export RUN.json --out FILE.jsonl|FILE.csv``: the run's tagged queries; the
  JSONL file is a query set again (the regression set of the next run);
- ``triage counts RUN.json``: tags per cause.

Tags live in ``--db`` (default ``$CHUNKSCOPE_STORE/triage.sqlite`` or
``.chunkscope/triage.sqlite``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from core.cli.options import check_out
from core.evaluate import TriageStore, export_tags, load_run, sample_failures, tag_query
from core.evaluate.triage import default_method, failed_queries
from core.methods import PAIRED

CAUSE_CHOICES = ("parse", "boundary", "context", "vocabulary", "label", "method", "other")


# ``core.evaluate.triage.default_method``'s rule, named from the registry's pair.
_DEFAULT_HELP = f"default: {PAIRED[-1]} when the run has it, else its first method"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triage",
        help="sample failed queries of a run, tag their causes, export a regression set",
        description="Read failures by hand: sample, tag with a cause, export.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    sample = _action(actions, "sample", "a reproducible sample of failed queries")
    sample.add_argument("--n", type=int, default=20, help="sample size (20)")
    sample.add_argument("--seed", type=int, default=0, help="sample seed (0)")
    sample.add_argument("--method", help=f"method whose failures to draw ({_DEFAULT_HELP})")
    sample.add_argument("--json", action="store_true", help="print one JSON object")
    sample.set_defaults(func=run_sample)
    tag = _action(actions, "tag", "tag one query with a cause")
    tag.add_argument("query_id", metavar="QUERY_ID")
    tag.add_argument(
        "cause", metavar="CAUSE", choices=CAUSE_CHOICES, help=f"one of {', '.join(CAUSE_CHOICES)}"
    )
    tag.add_argument("--note", help="free note")
    tag.add_argument("--method", help=f"method the failure was read under ({_DEFAULT_HELP})")
    tag.set_defaults(func=run_tag)
    export = _action(actions, "export", "export tagged queries as JSONL or CSV")
    export.add_argument("--out", required=True, metavar="FILE.jsonl|FILE.csv")
    export.set_defaults(func=run_export)
    counts = _action(actions, "counts", "tags per cause")
    counts.add_argument("--json", action="store_true", help="print one JSON object")
    counts.set_defaults(func=run_counts)


def _action(actions: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    action = actions.add_parser(name, help=help_text, description=help_text)
    action.add_argument("run", metavar="RUN.json", help="a run saved by eval --out")
    action.add_argument("--db", metavar="FILE", help="triage SQLite file")
    return action


def _open(args: argparse.Namespace) -> tuple[Any, Any]:
    return load_run(args.run), TriageStore(args.db)


def _short(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def print_failure(number: int, failure: Any, out: TextIO) -> None:
    rank = failure.rank if failure.rank is not None else "none retrieved"
    print(f"[{number}] {failure.query_id} ({failure.doc_id}) first gold rank: {rank}", file=out)
    print(f"  query: {failure.query}", file=out)
    for gold in failure.gold:
        print(
            f"  gold  chars {gold.char_start}-{gold.char_end}: {_short(gold.text or '')}", file=out
        )
    for hit, citation in failure.hits:
        print(
            f"  #{hit.rank:<2} {hit.score:.3f} {citation.render()}: {_short(citation.quote)}",
            file=out,
        )
    if failure.suggestion:
        s = failure.suggestion
        runner = f"; runner-up: {s.runner_up}" if s.runner_up else ""
        print(f"  suggested: {s.cause} ({s.confidence}{runner}; {s.decided_by})", file=out)
    if failure.tag:
        note = f" ({failure.tag.note})" if failure.tag.note else ""
        print(f"  tagged: {failure.tag.cause}{note}", file=out)


def run_sample(args: argparse.Namespace) -> int:
    run, store = _open(args)
    method = args.method or default_method(run)
    failures = sample_failures(run, method, n=args.n, seed=args.seed, store=store)
    total = len(failed_queries(run, method))
    if args.json:
        payload = {
            "run_id": run.run_id,
            "method": method,
            "failed": total,
            "seed": args.seed,
            "sample": [f.to_dict() for f in failures],
        }
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(
        f"{run.run_id}: {total} of {run.n_queries} queries failed under {method} "
        f"(no gold chunk in the top {run.text_k}); sample of {len(failures)}, seed {args.seed}"
    )
    for number, failure in enumerate(failures, start=1):
        print()
        print_failure(number, failure, sys.stdout)
    return 0


def run_tag(args: argparse.Namespace) -> int:
    run, store = _open(args)
    tag = tag_query(store, run, args.query_id, args.cause, note=args.note, method=args.method)
    note = f" ({tag.note})" if tag.note else ""
    print(f"tagged {tag.query_id} in {tag.run_id} as {tag.cause}{note} ({store.path})")
    return 0


def run_export(args: argparse.Namespace) -> int:
    check_out(args.out)
    run, store = _open(args)
    count = export_tags(store, run, args.out)
    print(f"exported {count} tagged queries of {run.run_id} to {args.out}")
    return 0


def run_counts(args: argparse.Namespace) -> int:
    run, store = _open(args)
    counts = store.tag_counts(run.run_id)
    if args.json:
        json.dump({"run_id": run.run_id, "counts": counts}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    for cause, count in counts.items():
        print(f"{cause:<12}{count:>6}")
    return 0
