"""Keep the candidates whose seeded defect is verified by its twin; write ``cases.json``.

Each candidate and its twin are ranked by ``chunkscope eval`` (naive, bm25, contextual;
fixed 300 characters, no overlap; each query ranked among its own document's chunks; a
failure: the gold not in the top 3) with the default model (all-MiniLM-L6-v2). A case is
kept when naive fails on it and succeeds on its twin (a method case: when naive fails and
bm25 succeeds). The ranks of both are written with each kept case.

Run: ``python eval/diagnose_seeded/verify.py [CAUSE ...]`` (after ``make_cases.py``; with
causes, only their candidates are ranked again and the other kept cases stay).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]  # this checkout's core, then verify.py
METHODS = "naive,bm25,contextual"


def write_set(root: Path, cases: list[dict], twin: bool) -> tuple[Path, Path]:
    docs = root / ("twin" if twin else "defect")
    docs.mkdir(parents=True)
    lines = []
    for case in cases:
        t = case["twin"] if twin else {}
        (docs / f"{case['id']}.md").write_text(t.get("text", case["text"]), "utf-8")
        lines.append(
            {
                "id": case["id"],
                "query": t.get("query", case["query"]),
                "doc": f"{case['id']}.md",
                "evidence": [{"text": t.get("gold", case["gold"])}],
            }
        )
    queries = root / ("twin.jsonl" if twin else "defect.jsonl")
    queries.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return docs, queries


def run_eval(docs: Path, queries: Path, out: Path) -> dict[str, dict]:
    from core.cli import main

    code = main(
        [
            "eval",
            "--queries",
            str(queries),
            "--docs",
            str(docs),
            "--methods",
            METHODS,
            "--policy",
            "fixed",
            "--size",
            "300",
            "--overlap",
            "0",
            "--unit",
            "chars",
            "--k",
            "3",
            "--scope",
            "doc",
            "--resamples",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0, code
    run = json.loads(out.read_text("utf-8"))
    return {q["id"]: q for q in run["queries"]}


def main() -> None:
    data = json.loads((HERE / "candidates.json").read_text("utf-8"))
    only = set(sys.argv[1:])  # causes to verify again; the others' kept cases stay
    cases = [c for c in data["cases"] if not only or c["cause"] in only]
    earlier = []
    if only and (HERE / "cases.json").exists():
        earlier = [
            c
            for c in json.loads((HERE / "cases.json").read_text("utf-8"))["cases"]
            if c["cause"] not in only
        ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        defect = run_eval(*write_set(root, cases, False), root / "defect.json")
        twin = run_eval(*write_set(root, cases, True), root / "twin.json")
    kept = []
    for case in cases:
        d, t = defect.get(case["id"]), twin.get(case["id"])
        if d is None or t is None:
            print(f"{case['id']}: unresolved", file=sys.stderr)
            continue
        naive_fails = bool(d["failed"]["naive"])
        # a method case is fixed by the other method; any other by its twin
        fixed = not (d if case["cause"] == "method" else t)["failed"][
            "bm25" if case["cause"] == "method" else "naive"
        ]
        ranks = {m: d["full_ranks"].get(m) for m in d["failed"]}
        twin_ranks = {m: t["full_ranks"].get(m) for m in t["failed"]}
        print(
            f"{case['id']:<14} naive fails {naive_fails!s:<5} twin fixes {fixed!s:<5} "
            f"ranks {ranks} twin {twin_ranks}"
        )
        if naive_fails and fixed:
            kept.append(case | {"verified": {"defect_ranks": ranks, "twin_ranks": twin_ranks}})
    kept = earlier + kept
    data["cases"] = kept
    (HERE / "cases.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    by: dict[str, int] = {}
    for case in kept:
        by[case["cause"]] = by.get(case["cause"], 0) + 1
    print(f"kept {len(kept)} (of them {len(kept) - len(earlier)} of {len(cases)} ranked now): {by}")


if __name__ == "__main__":
    main()
