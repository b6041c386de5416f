"""Diagnose the verified seeded failures (``cases.json``) and count agreement per cause.

The cases are ranked as ``verify.py`` ranked them (``chunkscope eval --out``, which
stores each failure's suggestion with its experiments), then read back through
``chunkscope diagnose RUN.json --json``, the output a judge reads. Every failure of a
case is one judgement: naive (the method each case was verified under) and, for the
causes that are no method's alone (boundary, context, vocabulary, label), bm25 and
contextual failures too, reported apart. Writes ``measured.json`` beside itself.

Run: ``python eval/diagnose_seeded/measure.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]  # this checkout's core, then verify.py

from verify import run_eval, write_set  # noqa: E402


def main() -> None:
    from core.cli import main as cli

    data = json.loads((HERE / "cases.json").read_text("utf-8"))
    cases = {c["id"]: c for c in data["cases"]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run_eval(*write_set(root, list(cases.values()), False), root / "run.json")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli(["diagnose", str(root / "run.json"), "--json"]) == 0
    found = json.loads(out.getvalue())
    table: dict[str, dict[str, dict[str, int]]] = {}
    rows = []
    for row in found["failures"]:
        case = cases[row["query_id"]]
        truth = case["cause"]
        if row["method"] != "naive" and truth == "method":
            continue  # a method case is verified for naive's failure only
        group = "naive" if row["method"] == "naive" else "others"
        cell = table.setdefault(group, {}).setdefault(truth, {})
        cell[row["cause"]] = cell.get(row["cause"], 0) + 1
        rows.append(
            {
                "id": case["id"],
                "method": row["method"],
                "truth": truth,
                "suggested": row["cause"],
                "confidence": row["confidence"],
                "decided_by": row.get("decided_by", ""),
                "experiments": [e["line"] for e in row.get("experiments", [])],
            }
        )
    for group, by in table.items():
        n = sum(sum(c.values()) for c in by.values())
        agree = sum(c.get(t, 0) for t, c in by.items())
        print(f"{group}: {agree} of {n} agree")
        for truth, cell in sorted(by.items()):
            print(f"  {truth:<11} {cell.get(truth, 0)}/{sum(cell.values())}  {cell}")
    (HERE / "measured.json").write_text(
        json.dumps({"table": table, "rows": rows}, indent=1) + "\n", "utf-8"
    )


if __name__ == "__main__":
    main()
