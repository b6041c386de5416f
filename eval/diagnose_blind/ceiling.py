"""How far the diagnosis's evidence can agree with the readers: a model fitted to them.

The suggested cause is read from what ``diagnose --json`` stores for a failure: the
repairs' ranks, the other methods' ranks, the evidence (absent key terms, the gold's share
of its chunk, a second place, ...) and the signals' strengths. Here a model is *fitted to
the readers' causes* over those same numbers, and asked, on failures it was not fitted
on, for the readers' cause. Where even a fitted model agrees with the readers about as
often as the rules, the limit is the evidence, not the rules' weights.

    python eval/diagnose_blind/ceiling.py features OUT.jsonl SET:PREFIX:DIAGNOSE.json ...
    python eval/diagnose_blind/ceiling.py fit [FEATURES.jsonl]

``features`` writes one row per judged failure (the set, the case, both readers' causes,
the suggestion, the numbers); ``PREFIX`` is ``A/`` or ``B/`` for a set judged under two
policies, ``-`` for none. ``fit`` reports, on the rows where the two readers agree:
leave-one-set-out over the development sets (a shallow tree, a forest, a logistic
regression), then each model fitted on every development set and measured on the blind
sets, beside the rules' own suggestion, and each blind set fitted on every set judged
before it. The last
line weighs only where no repair of the gold's text fixes the failure and the rules read
nothing off the text (damage, the gold's text in a top hit, a metric to compute), keeping
the rules' cause there: the repairs decide where they decide. The stored
``ceiling/features.jsonl`` was made from the rules of commit ``35cf5e1`` (set 21 from
``5cb5d65``, whose rules differ only in a confidence).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
DEV = ("set7", "set8", "set10", "set11", "set12", "set13", "set14", "set15", "set17")
BLIND = ("set16", "set18", "set19", "set20", "set21")  # in the order they were judged


def _rank(value: int | None) -> int:
    return 200 if value is None else min(int(value), 200)


EVIDENCE = ("absent", "figures", "gold_holds", "hit_holds", "damage", "second_place", "copy",
            "restated", "share", "outside", "elsewhere")  # fmt: skip


def numbers(failure: dict) -> dict[str, float]:
    """The failure's numbers: what the rules read, nothing the readers wrote."""
    ex, ev, method = failure["experiments"], failure["evidence"], failure["method"]
    before = next((e["before"] for e in ex if e["before"] is not None), None)
    others = [e for e in ex if e["repair"] == "method"]
    row: dict[str, float] = {f"method:{m}": float(method == m) for m in ("naive", "late", "bm25")}
    row["own_rank"] = _rank(before)
    row["other_best"] = min([_rank(e["after"]) for e in others] or [200])
    row["other_finds"] = float(any(e["fixes"] for e in others))
    for repair in ("boundary", "context", "parse"):
        tried = [e for e in ex if e["repair"] == repair and not e["drowned"]]
        row[f"{repair}:tried"] = float(bool(tried))
        row[f"{repair}:fixes"] = float(any(e["fixes"] for e in tried))
        row[f"{repair}:after"] = min([_rank(e["after"]) for e in tried] or [200])
        row[f"{repair}:gain"] = max([_rank(e["before"]) - _rank(e["after"]) for e in tried] or [0])
    drowned = [e for e in ex if e["drowned"]]
    row["drowned:tried"] = float(bool(drowned))
    row["drowned:fixes"] = float(any(e["fixes"] for e in drowned))
    for key in EVIDENCE:
        row[key] = float(ev.get(key, 1.0 if key == "share" else 0.0))
    row["metric"] = float(bool(ev.get("metric")))
    for signal in failure["signals"]:
        row[f"signal:{signal['name']}"] = float(signal.get("strength") or 0.0)
    return row


def _judged(name: str) -> tuple[dict[str, str], dict[str, str]]:
    def read(path: Path) -> dict[str, str]:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return {r["case"]: r["cause"] for r in rows}

    return read(HERE / name / "judgement_a.jsonl"), read(HERE / name / "judgement_b.jsonl")


def features(out: Path, sources: list[str]) -> None:
    rows = []
    for source in sources:
        name, prefix, path = source.split(":", 2)
        prefix = "" if prefix == "-" else prefix
        a, b = _judged(name)
        for failure in json.loads(Path(path).read_text())["failures"]:
            case = f"{prefix}{failure['query_id']}::{failure['method']}"
            if case not in a:
                continue
            rows.append({"set": name, "case": case, "a": a[case], "b": b[case],
                         "suggested": failure["suggested"], "x": numbers(failure)})  # fmt: skip
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} judged failures -> {out}")


def _decided(row: dict) -> bool:
    """Where the rules' cause stands: a repair of the gold's text fixes the failure, or the
    rules read the cause off the text (damage, the gold's text in a top hit, a metric to
    compute from the gold's figures)."""
    x, said = row["x"], row["suggested"]
    repaired = any(x[f"{r}:fixes"] for r in ("boundary", "context", "parse", "drowned"))
    read_off = (
        said == "parse"
        or (said == "label" and x["copy"] >= 0.9)
        or (said == "vocabulary" and x["metric"] and x["figures"] >= 2)
    )
    return bool(repaired or read_off)


def fit(path: Path) -> None:
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["a"] == r["b"]]
    keys = sorted({k for r in rows for k in r["x"]})

    def matrix(part: list[dict]) -> np.ndarray:
        return np.array([[r["x"].get(k, 0.0) for k in keys] for r in part])

    models = {
        "tree (depth 4)": lambda: DecisionTreeClassifier(
            max_depth=4, min_samples_leaf=8, random_state=0
        ),  # fmt: skip
        "forest": lambda: RandomForestClassifier(300, min_samples_leaf=3, random_state=0),
        "logistic": lambda: LogisticRegression(max_iter=5000, C=0.3),
    }

    def predict(make, train: list[dict], test: list[dict]) -> list[str]:
        x, y = matrix(train), matrix(test)
        mean, scale = x.mean(0), x.std(0) + 1e-9
        model = make().fit((x - mean) / scale, [r["a"] for r in train])
        return list(model.predict((y - mean) / scale))

    dev = [r for r in rows if r["set"] in DEV]
    blind = [r for r in rows if r["set"] in BLIND]
    print(f"readers agree on {len(rows)} failures: development {len(dev)} "
          f"({dict(Counter(r['a'] for r in dev))}), blind {len(blind)}")  # fmt: skip
    rules = sum(r["suggested"] == r["a"] for r in dev)
    print(f"  the rules on the development sets (written on them): {rules} of {len(dev)} "
          f"({rules / len(dev):.0%})")  # fmt: skip
    for label, make in models.items():
        hit = 0
        for name in sorted({r["set"] for r in dev}):
            test = [r for r in dev if r["set"] == name]
            said = predict(make, [r for r in dev if r["set"] != name], test)
            hit += sum(s == r["a"] for s, r in zip(said, test, strict=True))
        print(f"  {label}, fitted leave-one-set-out: {hit} of {len(dev)} ({hit / len(dev):.0%})")
    if not blind:
        return
    for name in BLIND:
        test = [r for r in blind if r["set"] == name]
        if not test:
            continue
        parts = [f"rules {sum(r['suggested'] == r['a'] for r in test)}"]
        for label, make in models.items():
            said = predict(make, dev, test)
            parts.append(f"{label} {sum(s == r['a'] for s, r in zip(said, test, strict=True))}")
        print(f"  {name} ({len(test)}): " + ", ".join(parts))
    ahead = {"rules": 0, "logistic": 0, "logistic where no repair decides": 0, "of": 0}
    for name in BLIND[1:]:  # each set fitted on every set judged before it
        test = [r for r in blind if r["set"] == name]
        before = dev + [r for r in blind if BLIND.index(r["set"]) < BLIND.index(name)]
        if not test:
            continue
        said = predict(models["logistic"], before, test)
        hit = sum(s == r["a"] for s, r in zip(said, test, strict=True))
        kept = [r["suggested"] if _decided(r) else s for s, r in zip(said, test, strict=True)]
        ahead["rules"] += sum(r["suggested"] == r["a"] for r in test)
        ahead["logistic"] += hit
        ahead["logistic where no repair decides"] += sum(
            s == r["a"] for s, r in zip(kept, test, strict=True)
        )
        ahead["of"] += len(test)
        print(f"  {name}, logistic fitted on every set judged before it ({len(before)}): "
              f"{hit} of {len(test)}")  # fmt: skip
    if ahead["of"]:
        print("  sets 18 on, each fitted on the sets before it: " + ", ".join(
            f"{k} {v}" for k, v in ahead.items()))  # fmt: skip
    total = {"rules": sum(r["suggested"] == r["a"] for r in blind)}
    for label, make in models.items():
        said = predict(make, dev, blind)
        total[label] = sum(s == r["a"] for s, r in zip(said, blind, strict=True))
    print(
        f"  blind sets, fitted on every development set ({len(blind)}): "
        + ", ".join(f"{k} {v} ({v / len(blind):.0%})" for k, v in total.items())
    )


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "features":
        features(Path(args[1]), args[2:])
    elif args and args[0] == "fit":
        fit(Path(args[1]) if len(args) > 1 else HERE / "ceiling" / "features.jsonl")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
