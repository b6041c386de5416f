"""Agreement of the suggested causes with two readers' causes, written blind.

    python eval/diagnose_blind/compare.py                 # the first set, its stored files
    python eval/diagnose_blind/compare.py set2            # the second set
    python eval/diagnose_blind/compare.py set2 NOW.json   # another suggestion file on it

A suggestion file has one JSON object a line: ``case`` (query id :: method), ``cause``,
``confidence``; ``diagnose RUN.json --docs ... --json`` gives them (see README.md).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def read(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["case"]: r for r in rows}


def from_diagnose(path: Path) -> dict[str, dict]:
    """Rows of a ``diagnose --json`` object, or of a suggestion file."""
    text = path.read_text()
    if text.lstrip().startswith("{") and '"failures"' in text[:400]:
        data = json.loads(text)
        return {
            f"{f['query_id']}::{f['method']}": {
                "cause": f["suggested"],
                "confidence": f["confidence"],
            }
            for f in data["failures"]
        }
    return read(path)


def report(name: str, said: dict[str, dict], a: dict[str, dict], b: dict[str, dict]) -> None:
    cases = sorted(a)
    agreed = [c for c in cases if a[c]["cause"] == b[c]["cause"]]
    both = sum(said[c]["cause"] == a[c]["cause"] for c in agreed)
    named = [c for c in cases if said[c]["cause"] != "unclear"]
    either = sum(said[c]["cause"] in (a[c]["cause"], b[c]["cause"]) for c in named)
    strong_wrong = sum(
        said[c]["cause"] not in (a[c]["cause"], b[c]["cause"]) and said[c]["confidence"] == "strong"
        for c in named
    )
    print(
        f"{name}: = both readers' cause {both} of {len(agreed)}; names a cause on "
        f"{len(named)} of {len(cases)}, one reader's cause on {either}; strong and neither "
        f"reader's cause {strong_wrong}"
    )
    strong = [c for c in named if said[c]["confidence"] == "strong"]
    strong_hit = sum(said[c]["cause"] in (a[c]["cause"], b[c]["cause"]) for c in strong)
    strong_agreed = [c for c in strong if c in agreed]
    strong_both = sum(said[c]["cause"] == a[c]["cause"] for c in strong_agreed)
    unclear = len(cases) - len(named)
    print(
        f"  unclear {unclear} of {len(cases)} ({unclear / max(len(cases), 1):.0%}); strong "
        f"{len(strong)}, a reader's cause on {strong_hit}; where the readers agree, strong "
        f"{len(strong_agreed)}, their cause on {strong_both}"
    )
    per = Counter(a[c]["cause"] for c in agreed)
    hit = Counter(a[c]["cause"] for c in agreed if said[c]["cause"] == a[c]["cause"])
    print("  by the readers' cause: " + ", ".join(f"{k} {hit[k]}/{n}" for k, n in per.items()))


def main() -> None:
    args = sys.argv[1:]
    folder = HERE
    if args and Path(args[0]).is_dir():
        folder = Path(args.pop(0))
    elif args and (HERE / args[0]).is_dir():
        folder = HERE / args.pop(0)
    a, b = read(folder / "judgement_a.jsonl"), read(folder / "judgement_b.jsonl")
    agreed = sum(a[c]["cause"] == b[c]["cause"] for c in a)
    print(f"{folder.name}: readers agree on {agreed} of {len(a)} failures")
    files = [Path(f) for f in args] or sorted(folder.glob("suggested_*.jsonl"))
    for path in files:
        report(path.name, from_diagnose(path), a, b)


if __name__ == "__main__":
    main()
