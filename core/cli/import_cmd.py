"""``chunkscope import-chunking-eval`` and ``chunkscope import-qa``: labelled sets from
elsewhere, written as a JSONL query set.

``import-chunking-eval DIR`` reads ``DIR/questions_df.csv`` and ``DIR/corpora/*.md``; every
reference span is checked against the loaded document's text, and the import fails if any
differs. ``import-qa FILE`` reads question, evidence, page and document columns of a CSV
or JSONL file; with ``--docs`` the evidence is resolved now (exact gold spans written,
unresolved queries listed on stderr and written with their evidence only).
"""

from __future__ import annotations

import argparse
import sys

from core.cli.options import check_out, expand_docs
from core.evaluate import (
    import_chunking_eval,
    import_qa,
    pin_labels,
    resolve_queries,
    write_queries,
)
from core.evaluate.resolve import check_threshold
from core.formats import load_document


def register(subparsers: argparse._SubParsersAction) -> None:
    chunking = subparsers.add_parser(
        "import-chunking-eval",
        help="import the chunking_evaluation question set as a query set",
        description="Convert DIR/questions_df.csv (spans into DIR/corpora/*.md) to JSONL.",
    )
    chunking.add_argument("dir", metavar="DIR", help="folder with questions_df.csv, corpora/")
    chunking.add_argument("--out", required=True, metavar="QUERIES.jsonl")
    chunking.set_defaults(func=run_chunking_eval)

    qa = subparsers.add_parser(
        "import-qa",
        help="import a QA table (question, evidence text, page, document) as a query set",
        description="Convert a CSV or JSONL QA table to a JSONL query set with evidence.",
    )
    qa.add_argument("file", metavar="FILE", help="a .csv or .jsonl file")
    qa.add_argument("--question", required=True, metavar="COL", help="question column")
    qa.add_argument(
        "--evidence", required=True, metavar="COL",
        help="evidence text column, or LIST[].FIELD for nested evidence (evidence[].evidence_text)",
    )  # fmt: skip
    qa.add_argument(
        "--page", metavar="COL", help="page column, or LIST[].FIELD paired with --evidence"
    )
    qa.add_argument(
        "--page-base", type=int, choices=(0, 1), default=1,
        help="number of the first page in the file (0 for FinanceBench; default 1)",
    )  # fmt: skip
    qa.add_argument("--doc", required=True, metavar="COL", help="document name column")
    qa.add_argument("--id", dest="id_column", metavar="COL", help="query id column")
    qa.add_argument("--docs", nargs="+", metavar="PATH", help="resolve evidence against these")
    qa.add_argument("--threshold", type=float, default=0.95, help="alignment threshold")
    qa.add_argument("--out", required=True, metavar="QUERIES.jsonl")
    qa.set_defaults(func=run_qa)


def run_chunking_eval(args: argparse.Namespace) -> int:
    check_out(args.out)
    queries = import_chunking_eval(args.dir)
    spans = sum(len(q.gold) for q in queries)
    count = write_queries(args.out, queries)
    docs = len({q.doc for q in queries})
    print(f"wrote {count} queries ({spans} gold spans verified, {docs} documents) to {args.out}")
    return 0


def resolved_summary(resolved: list, unresolved: list) -> str:
    """Queries and spans counted apart: "13 queries resolved: 12 exact, 1 aligned; 17 spans,
    0 unresolved". A query is exact when every one of its spans was found exactly."""
    aligned = sum(1 for r in resolved if any(g.method == "aligned" for g in r.gold))
    spans = sum(len(r.gold) for r in resolved)
    noun = "query" if len(resolved) == 1 else "queries"
    return (
        f"{len(resolved)} {noun} resolved: {len(resolved) - aligned} exact, {aligned} aligned; "
        f"{spans} span{'' if spans == 1 else 's'}; {len(unresolved)} unresolved"
    )


def run_qa(args: argparse.Namespace) -> int:
    check_out(args.out)
    check_threshold(args.threshold)
    queries = import_qa(
        args.file,
        question=args.question,
        evidence=args.evidence,
        page=args.page,
        doc=args.doc,
        id_column=args.id_column,
        page_base=args.page_base,
    )
    if not args.docs:
        count = write_queries(args.out, queries)
        print(f"wrote {count} queries with evidence (resolved at eval time) to {args.out}")
        return 0

    docs = [load_document(path) for path in expand_docs(args.docs)]
    resolved, unresolved = resolve_queries(queries, docs, threshold=args.threshold)
    pinned = {q.id: q for q in pin_labels(resolved)}
    write_queries(args.out, [pinned.get(q.id, q) for q in queries])
    print(f"wrote {len(queries)} queries to {args.out}: {resolved_summary(resolved, unresolved)}")
    for item in unresolved:
        print(f"unresolved {item.query_id} ({item.doc}): {item.reason}", file=sys.stderr)
    return 0
