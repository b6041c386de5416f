"""``chunkscope diagnose RUN.json``: why each failure of a saved run failed.

Each failure's suggested cause rests on experiments (``core.diagnose.repairs``): the
repairs tried and the rank each gave the gold ("kept whole in one chunk: rank 14 → 2"),
and the other methods' ranks. Without ``--docs`` the suggestions and experiments ``eval
--out`` stored in the run are listed. With ``--docs`` (the run's documents, or folders
holding them) every failure is diagnosed again with the run's model (``--model``; the
repaired texts are embedded, nothing else), with its signals too. Without ``--json`` a
table of failures by cause and confidence, then each failure with its experiments.

``--json`` prints one object, stable for readers (``JSON_SCHEMA``): ``schema``,
``run_id``, ``source`` (``stored`` or ``diagnosed``), ``methods``, ``counts`` (``{method:
{cause: {confidence: n}}}``) and ``failures``, one per failed query and method:
``query_id``, ``method``, ``query``, ``cause``, ``confidence``, ``runner_up``,
``decided_by`` and ``experiments`` (each: ``repair`` boundary / context / parse /
method, ``before`` and ``after`` ranks, null past the run's depth, ``fixes``, ``line``,
``detail``, ``span``, ``method``, ``drowned``: a boundary repair of a gold drowned in
its chunk); with ``--docs`` also ``signals`` and ``scores``.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any, TextIO

import core.embed
from core.chunk import chunk_document
from core.chunk.policy_registry import policy_from_dict
from core.cli.options import expand_docs, load_each
from core.diagnose.run_failures import diagnose_methods
from core.diagnose.track_record import FAILURES, FILINGS, RECORDS
from core.embed import VectorCache
from core.errors import LabelError
from core.evaluate import load_run
from core.formats import parse_document
from core.index.indexer import method_records
from core.model.tokens import load_tokenizer

CONFIDENCES = ("strong", "weak", "unclear")
JSON_SCHEMA = 2  # 2: experiments with every failure


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diagnose",
        help="the suggested cause of every failure of a saved run, with its evidence",
        description=(
            "Diagnose every failed query of a run saved by eval --out: signals, suggested "
            "cause, confidence and runner-up, per method. --docs re-reads the documents "
            "for the signals; without it the suggestions stored in the run are shown."
        ),
    )
    parser.add_argument("run", metavar="RUN.json", help="a run saved by eval --out")
    parser.add_argument("--method", help="one method of the run (default: every method)")
    parser.add_argument(
        "--docs", nargs="+", metavar="PATH",
        help="the run's documents, or folders of them (re-diagnose with every signal)",
    )  # fmt: skip
    parser.add_argument("--parser", choices=("fast", "layout"), default="fast")
    parser.add_argument(
        "--model", metavar="DIR", help="with --docs: the run's model folder (default MiniLM)"
    )
    parser.add_argument(
        "--cache", metavar="DIR",
        help="with --docs: keep the repairs' vectors and late token states in DIR (the "
        "folder eval --cache used serves them again)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _documents(args: argparse.Namespace, run: Any) -> dict[str, Any]:
    docs, _ = load_each(expand_docs(args.docs))
    found = {d.doc_id: d for d in docs if run.corpus.get(d.doc_id) == d.sha256}
    missing = [d for d in run.corpus if d not in found]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise LabelError(
            f"--docs lacks {len(missing)} document(s) of {run.run_id} as it ran: {shown}"
        )
    return found


def load_model(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(encoder, records function)`` for the repairs (the seam tests replace); with
    ``--cache``, the records read and kept there."""
    encoder = core.embed.load_encoder(args.model, deterministic=True)
    if args.cache:
        return encoder, functools.partial(method_records, cache=VectorCache(args.cache))
    return encoder, method_records


def _chunker(args: argparse.Namespace, run: Any) -> Any:
    policy = policy_from_dict(run.policy)
    tokenizer = None
    if policy.unit == "tokens":
        tokenizer = load_tokenizer(None)

    def parts(doc: Any) -> Any:
        blocks = parse_document(doc, parser=args.parser).blocks
        return blocks, chunk_document(doc, blocks, policy, tokenizer)

    return parts


def _stored(run: Any, methods: list[str]) -> list[dict[str, object]]:
    rows = []
    for record in run.queries:
        for method in methods:
            if not record.failed.get(method):
                continue
            found = record.suggested.get(method)
            rows.append(
                {"query_id": record.id, "method": method, "query": record.query}
                | {"cause": "", "confidence": "", "runner_up": "", "decided_by": "",
                   "experiments": []}
                | (found.to_dict() if found else {})
            )  # fmt: skip
    return rows


def run(args: argparse.Namespace) -> int:
    result = load_run(args.run)
    if args.method is not None and args.method not in result.methods:
        raise LabelError(
            f"--method {args.method!r} is not in the run ({', '.join(result.methods)})"
        )
    methods = [args.method] if args.method else list(result.methods)
    if args.docs:
        docs = _documents(args, result)
        encoder, embed = load_model(args)
        found = diagnose_methods(
            result, docs, methods, chunker=_chunker(args, result), encoder=encoder, embed=embed
        )
        queries = {q.id: q.query for q in result.queries}
        rows = [
            d.to_dict() | {"query": queries[qid], "cause": d.suggested}
            for m in methods
            for qid, d in sorted(found[m].items())
        ]
        source = "diagnosed"
    else:
        rows = _stored(result, methods)
        source = "stored"
        if rows and not any(r["cause"] for r in rows):
            print(
                f"note: {args.run} stores no suggestion (written before they were kept): "
                "give --docs to diagnose it",
                file=sys.stderr,
            )
    if args.json:
        payload = {"schema": JSON_SCHEMA, "run_id": result.run_id, "source": source,
                   "methods": methods, "failures": rows, "counts": counts(rows)}  # fmt: skip
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print_table(result, rows, source, sys.stdout)
    return 0


def counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """``{method: {cause: {confidence: n}}}``."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        cause = str(row.get("cause") or "-")
        by = out.setdefault(str(row["method"]), {}).setdefault(cause, {})
        level = str(row.get("confidence") or "-")
        by[level] = by.get(level, 0) + 1
    return out


def print_table(run: Any, rows: list[dict[str, Any]], source: str, out: TextIO) -> None:
    """Failures by cause and confidence per method, then one line per failure."""
    print(f"{run.run_id}: {len(rows)} failure(s) ({source}); top {run.text_k}", file=out)
    for method, causes in counts(rows).items():
        print(f"\n{method}", file=out)
        print(f"  {'cause':<12}" + "".join(f"{c:>9}" for c in CONFIDENCES) + f"{'total':>8}",
              file=out)  # fmt: skip
        for cause, levels in sorted(causes.items(), key=lambda kv: -sum(kv[1].values())):
            cells = "".join(f"{levels.get(c, 0):>9}" for c in CONFIDENCES)
            print(f"  {cause:<12}{cells}{sum(levels.values()):>8}", file=out)
    said = sorted({str(r.get("cause")) for r in rows} & set(RECORDS), key=list(RECORDS).index)
    if said:
        print(f"\nMeasured on {FAILURES} failures of {FILINGS} filings no rule was written "
              "on: a suggestion was a careful reader's cause", file=out)  # fmt: skip
        for cause in said:
            record = RECORDS[cause]
            print(f"  {cause:<12}{record.readers:>4} of {record.suggested:<4}"
                  f"({record.share:.0%})", file=out)  # fmt: skip
    print(file=out)
    for row in rows:
        cause = row.get("cause") or "-"
        runner = f"; runner-up {row['runner_up']}" if row.get("runner_up") else ""
        line = f"{row['method']:<12}{row['query_id']}: {cause} ({row.get('confidence') or '-'}"
        print(f"{line}{runner}) by {row.get('decided_by') or '-'}", file=out)
        for made in row.get("experiments", ()):
            mark = "  (fixes it)" if made.get("fixes") else ""
            print(f"    {made['line']}{mark}", file=out)
        for signal in row.get("signals", ()):
            if signal["holds"]:
                print(f"    {signal['strength']:.2f} {signal['cause']}: {signal['name']}: "
                      f"{signal['detail']}", file=out)  # fmt: skip
