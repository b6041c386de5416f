"""``chunkscope bench``: time our pipeline against raw libraries and peers in one run.

Prints the machine, then one row per measurement: ours, the baseline, their ratio, the
target and whether it holds, then notes (reasons for skips, what each number covers).
``--json`` prints ``{"machine", "settings", "cases": {key: row}}`` instead. Progress goes
to stderr. Exits 0 whether or not targets hold (the table says which); 2 on a user error
such as a missing corpus.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.bench import (
    CASE_NAMES,
    OPT_IN_CASES,
    default_settings,
    format_table,
    run_bench,
    settings_dict,
    to_json,
)
from core.errors import ChunkscopeError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="benchmark parse, chunk, embed, store and UI steps against baselines",
        description=(
            "Run each case several times on the shared corpus, interleaved with its "
            "baseline, and print medians, ratios and targets."
        ),
    )
    parser.add_argument(
        "--quick", action="store_true", help="smaller inputs and fewer repeats (under 2 min)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where the encoder runs; cuda also runs the long-context case (default cpu)",
    )

    opt_in = ", ".join(OPT_IN_CASES)
    parser.add_argument(
        "--cases",
        help=f"comma list of cases (default all): {', '.join(CASE_NAMES)}; {opt_in} runs "
        "only when named",
    )
    parser.add_argument(
        "--docs", type=int, default=2000, metavar="N",
        help="documents in the generated corpus of scale-corpus (default 2000)",
    )  # fmt: skip
    parser.set_defaults(func=run)


def parse_cases(value: str | None) -> tuple[str, ...]:
    if not value:
        return CASE_NAMES
    known = (*CASE_NAMES, *OPT_IN_CASES)
    asked = tuple(dict.fromkeys(c.strip() for c in value.split(",") if c.strip()))
    unknown = [c for c in asked if c not in known]
    if unknown or not asked:
        raise ChunkscopeError(
            f"unknown case(s) {', '.join(unknown) or value!r}: use {', '.join(known)}"
        )
    return asked


def run(args: argparse.Namespace) -> int:
    if args.docs < 1:
        raise ChunkscopeError(f"--docs must be at least 1, not {args.docs}")
    settings = default_settings(
        quick=args.quick, device=args.device, cases=parse_cases(args.cases), scale_docs=args.docs
    )

    def log(line: str) -> None:
        print(f"bench: {line}", file=sys.stderr, flush=True)

    results, machine = run_bench(settings, log=log)
    if args.json:
        payload = to_json(results, machine, settings_dict(settings))
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_table(results, machine))
    return 0
