"""``chunkscope check``: a regression gate for a team's CI.

Runs a labelled query set (``--queries``) as ``eval`` would, and/or the tagged failures of
a past run (``--tagged RUN.json``, its triage tags) as must-pass cases, then checks the
means against ``--min`` thresholds and against a ``--baseline`` run (``--max-drop``), and
lists the queries whose rank got worse than in the baseline. Exit status: 0 when every
check passes, 1 when one fails (a regression), 2 on bad input (a malformed query set,
threshold or run file: one ``error:`` line).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from core import defaults
from core.cli import options
from core.cli.options import (
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
from core.cli.run_table import cell
from core.embed import VectorCache
from core.errors import LabelError
from core.evaluate import TriageStore, load_run, read_queries, resolve_queries, run_eval, save_run
from core.evaluate.triage import CAUSES
from core.formats.format_registry import describe_formats
from core.tune import gate
from core.tune.gate import parse_limits

SHOWN_REGRESSIONS = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check",
        help="a regression gate: thresholds, a baseline run, must-pass cases; exits 1 on a fail",
        description=(
            "Evaluate a query set (and/or the tagged failures of a past run) and check the "
            "numbers against thresholds and a baseline run. Exit 0: pass, 1: regression, "
            "2: bad input."
        ),
    )
    parser.add_argument("--queries", metavar="Q.jsonl", help="query set (or --tagged)")
    parser.add_argument(
        "--docs",
        nargs="+",
        metavar="PATH",
        help="documents, or folders of documents (" + describe_formats() + "); not with --run",
    )
    parser.add_argument(
        "--run", metavar="RUN.json",
        help="check a saved run (eval --out, import-run --out) instead of evaluating again",
    )  # fmt: skip
    parser.add_argument(
        "--method", dest="only", metavar="M",
        help="with --run: check this method only (an imported retriever, say)",
    )  # fmt: skip
    add_policy_arguments(parser, default=defaults.POLICY)
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--min", metavar="M=V,...", help="thresholds: hit@5=0.8,mrr=0.6")
    parser.add_argument("--baseline", metavar="RUN.json", help="a saved run to compare with")
    parser.add_argument("--max-drop", metavar="M=V,...", help="allowed drops: mrr=0.02")
    parser.add_argument(
        "--max-new", metavar="CAUSE=N,...",
        help="at most N failures newly suggested as CAUSE against --baseline (without it: "
        "in all), e.g. parse=0 for no new parse failures (the run's stored suggestions)",
    )  # fmt: skip
    parser.add_argument("--tagged", metavar="RUN.json", help="its tagged failures must pass")
    parser.add_argument("--triage-db", metavar="FILE", help="tags file (default: the store's)")
    parser.add_argument("--out", metavar="RUN.json", help="save this run (a next baseline)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _inputs(args: argparse.Namespace) -> dict[str, Any]:
    """Everything read before any work: malformed input fails here, with exit 2."""
    minimums = parse_limits(args.min, "--min")
    drops = parse_limits(args.max_drop, "--max-drop")
    if drops and not args.baseline:
        raise LabelError("--max-drop needs --baseline RUN.json to compare with")
    if not args.queries and not args.tagged:
        raise LabelError("give --queries Q.jsonl, --tagged RUN.json, or both")
    if args.queries and not (minimums or args.baseline or args.max_new):
        raise LabelError("nothing to check --queries against: give --min and/or --baseline")
    return {
        "new_causes": parse_causes(args.max_new),
        "minimums": minimums,
        "drops": drops,
        "queries": read_queries(args.queries) if args.queries else None,
        "baseline": load_run(args.baseline) if args.baseline else None,
        "tagged": _tagged(args) if args.tagged else None,
    }


def _tagged(args: argparse.Namespace) -> tuple[Any, dict[str, tuple[str, ...]], list[Any]]:
    """The tagged run, its cases (query id -> the methods it was tagged under) and their
    labels."""
    past = load_run(args.tagged)
    tags = TriageStore(args.triage_db).tags(past.run_id)
    if not tags:
        raise LabelError(
            f"{args.tagged} ({past.run_id}) has no tagged query: tag failures with "
            "`chunkscope triage tag` or on the Evaluate page first"
        )
    cases: dict[str, tuple[str, ...]] = {}
    for t in tags:  # one tag per failure and method: a query may be tagged under several
        cases[t.query_id] = (*cases.get(t.query_id, ()), t.method)
    labels = [past.query(q).as_label(tagged_in=past.run_id) for q in sorted(cases)]
    return past, cases, labels


def _saved(args: argparse.Namespace) -> int:
    """``--run``: the thresholds and the baseline against a saved run, nothing evaluated."""
    if args.docs or args.queries or args.tagged:
        raise LabelError("--run checks a saved run: leave out --docs, --queries and --tagged")
    minimums = parse_limits(args.min, "--min")
    drops = parse_limits(args.max_drop, "--max-drop")
    baseline = load_run(args.baseline) if args.baseline else None
    new_causes = parse_causes(args.max_new)
    if not minimums and baseline is None and not new_causes:
        raise LabelError(
            "nothing to check the run against: give --min, --baseline and/or --max-new"
        )
    result = load_run(args.run)
    if args.only is not None and args.only not in result.methods:
        raise LabelError(f"--method {args.only!r} is not in the run ({', '.join(result.methods)})")
    findings = gate.minimum_findings(result, minimums)
    findings += cause_findings(result, baseline, new_causes)
    found: list[Any] = []
    if baseline is not None:
        findings += gate.drop_findings(result, baseline, drops)
        found = gate.regressions(result, baseline)
    if args.only is not None:
        findings = [f for f in findings if f.method == args.only]
        found = [r for r in found if r.method == args.only]
    verdict = gate.Verdict(findings=tuple(findings), regressions=tuple(found))
    if args.json:
        json.dump(verdict.to_dict() | {"run_id": result.run_id}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_verdict(verdict, result, baseline, sys.stdout)
    return 0 if verdict.passed else 1


def run(args: argparse.Namespace) -> int:
    if args.run:
        return _saved(args)
    if not args.docs:
        raise LabelError("give --docs PATH... to evaluate, or --run RUN.json to check a saved run")
    inputs = _inputs(args)
    config = eval_config(args)
    check_out(args.out)
    paths = expand_docs(args.docs)
    docs, failures = load_each(paths)
    if not docs or failures:
        raise LabelError(failed_files_line(failures, len(paths)))
    model = options.load_model(args)  # looked up here: a test's seam
    evaluate, parts = _evaluator(args, config, docs, model, VectorCache())
    findings, found, result = [], [], None
    if inputs["queries"] is not None:
        result = evaluate(inputs["queries"])
        if inputs["new_causes"] or args.out:
            result = with_suggestions(result, docs, parts, encoder=model[0], embed=model[1])
        findings += gate.minimum_findings(result, inputs["minimums"])
        findings += cause_findings(result, inputs["baseline"], inputs["new_causes"])
        if inputs["baseline"] is not None:
            findings += gate.drop_findings(result, inputs["baseline"], inputs["drops"])
            found = gate.regressions(result, inputs["baseline"])
    if inputs["tagged"] is not None:
        _, cases, labels = inputs["tagged"]
        findings += _must_pass(evaluate, docs, cases, labels)
    verdict = gate.Verdict(findings=tuple(findings), regressions=tuple(found))
    if args.out and result is not None:
        save_run(result, args.out)
    if args.json:
        json.dump(verdict.to_dict() | {"run_id": result.run_id if result else None}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_verdict(verdict, result, inputs["baseline"], sys.stdout)
    return 0 if verdict.passed else 1


def _evaluator(args: argparse.Namespace, config: Any, docs: list, model: tuple, cache: Any) -> Any:
    encoder, embed, tokenizer = model
    parts = doc_parts(args.parser, config.policy, tokenizer)

    def chunks_of(doc: Any) -> Any:
        return parts(doc)[1]

    def evaluate(queries: list) -> Any:
        return run_eval(
            queries, docs, config, encoder=encoder, embed=embed, chunker=chunks_of, cache=cache
        )

    return evaluate, parts


def parse_causes(text: str | None) -> dict[str, int]:
    """``"parse=0,label=2"`` -> ``{"parse": 0, "label": 2}``; ``LabelError`` if malformed."""
    out: dict[str, int] = {}
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        cause, _, value = item.partition("=")
        cause = cause.strip()
        if cause not in CAUSES:
            raise LabelError(f"--max-new: unknown cause {cause!r}: use one of {', '.join(CAUSES)}")
        try:
            out[cause] = int(value)
        except ValueError:
            raise LabelError(
                f"--max-new takes CAUSE=N with N a whole number, got {item!r}"
            ) from None
        if out[cause] < 0:
            raise LabelError(f"--max-new: {item!r} must not be negative")
    return out


def new_failures(run: Any, baseline: Any, method: str, cause: str) -> list[str]:
    """Query ids failing under ``method`` with ``cause`` suggested, that the baseline did
    not already fail with that cause (or, with no suggestion stored there, did not fail)."""
    before = {q.id: q for q in baseline.queries} if baseline is not None else {}
    out = []
    for record in run.queries:
        now = record.suggested.get(method)
        if not record.failed.get(method) or now is None or now.cause != cause:
            continue
        old = before.get(record.id)
        if old is not None and old.failed.get(method):
            was = old.suggested.get(method)
            if was is None or was.cause == cause:
                continue
        out.append(record.id)
    return out


def cause_findings(run: Any, baseline: Any, limits: dict[str, int]) -> list:
    """One finding per method and ``--max-new`` cause: the failures newly suggested as it."""
    if not limits:
        return []
    if not any(q.suggested for q in run.queries) and any(
        any(q.failed.values()) for q in run.queries
    ):
        raise LabelError(
            f"{run.run_id} stores no suggested causes: write it with `chunkscope eval --out` "
            "(or check with --docs) to gate on --max-new"
        )
    out = []
    for method in run.methods:
        for cause, limit in limits.items():
            new = new_failures(run, baseline, method, cause)
            had = None
            if baseline is not None and method in baseline.methods:
                had = float(sum(
                    bool(q.failed.get(method)) and getattr(q.suggested.get(method), "cause", "")
                    == cause for q in baseline.queries
                ))  # fmt: skip
            out.append(
                gate.Finding(
                    kind="new-cause", method=method, metric=cause, value=float(len(new)),
                    baseline=had,
                    limit=float(limit), passed=len(new) <= limit, detail=", ".join(new[:10])
                    + (f" and {len(new) - 10} more" if len(new) > 10 else ""),
                )
            )  # fmt: skip
    return out


def _must_pass(evaluate: Any, docs: list, cases: dict[str, tuple[str, ...]], labels: list) -> list:
    """The tagged cases as findings: those that no longer resolve fail with their reason."""
    _, unresolved = resolve_queries(labels, docs)
    reasons = {u.query_id: u.reason for u in unresolved}
    kept = [label for label in labels if label.id not in reasons]
    return gate.must_pass_findings(evaluate(kept) if kept else None, cases, reasons)


def _rank(rank: int | None, depth: int) -> str:
    return f"rank {rank}" if rank is not None else f"not in the top {depth}"


def _finding_line(f: Any) -> str:
    mark = "PASS" if f.passed else "FAIL"
    value = cell(f.value)
    if f.kind == "min":
        return f"{mark}  {f.method}  {f.metric} {value} {'>=' if f.passed else '<'} {f.limit:.3f}"
    if f.kind == "drop":
        was = cell(f.baseline)
        drop = "-" if f.value is None or f.baseline is None else f"{f.baseline - f.value:+.3f}"
        return (
            f"{mark}  {f.method}  {f.metric} {was} -> {value} (drop {drop}, {f.limit:.3f} allowed)"
        )
    if f.kind == "new-cause":
        had = "" if f.baseline is None else f" (the baseline failed {int(f.baseline)} so)"
        listed = f": {f.detail}" if f.detail else ""
        return (
            f"{mark}  {f.method}  {int(f.value or 0)} new {f.metric} failure(s){had}, "
            f"{int(f.limit or 0)} allowed{listed}"
        )
    what = f"{f.metric} {f.detail}" if f.metric else f.detail
    return f"{mark}  must-pass {f.query_id} ({f.method or 'any method'}): {what}"


def print_verdict(verdict: Any, run: Any, baseline: Any, out: TextIO) -> None:
    """Every check on its line, the regressed queries, and the result."""
    if run is not None:
        policy = run.policy.get("key", "")
        print(f"check {run.run_id}  policy {policy}  queries {run.n_queries}", file=out)
    if baseline is not None:
        print(f"baseline {baseline.run_id}  policy {baseline.policy.get('key', '')}", file=out)
    for finding in verdict.findings:
        print(_finding_line(finding), file=out)
    if verdict.regressions:
        depth = run.depth if run is not None else 10
        print(f"\nregressed queries ({len(verdict.regressions)}):", file=out)
        for r in verdict.regressions[:SHOWN_REGRESSIONS]:
            now = " (now failing)" if r.now_failing else ""
            print(
                f"  {r.query_id} ({r.method}): was found at {_rank(r.before, depth)}, "
                f"now {_rank(r.after, depth)}{now}",
                file=out,
            )
        if len(verdict.regressions) > SHOWN_REGRESSIONS:
            print(f"  ... and {len(verdict.regressions) - SHOWN_REGRESSIONS} more", file=out)
    failed = len(verdict.failed)
    result = "PASS" if verdict.passed else f"FAIL ({failed} of {len(verdict.findings)} checks)"
    print(f"\nresult: {result}", file=out)
