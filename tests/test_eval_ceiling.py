"""The ceiling experiment's inputs (``eval/diagnose_blind/ceiling.py``): the numbers read
from a stored diagnosis, and its features file agreeing with the sets' own files (the
readers' causes, the suggestions measured blind)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BLIND = Path(__file__).resolve().parents[1] / "eval" / "diagnose_blind"


@pytest.fixture(scope="module")
def ceiling():
    spec = importlib.util.spec_from_file_location("ceiling", BLIND / "ceiling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["case"]: r for r in rows}


def test_the_numbers_of_a_failure(ceiling):
    failure = {
        "method": "late",
        "experiments": [
            {"repair": "boundary", "before": 30, "after": 4, "fixes": True, "drowned": False},
            {"repair": "context", "before": 30, "after": None, "fixes": False, "drowned": False},
            {
                "repair": "method",
                "before": 30,
                "after": 1,
                "fixes": True,
                "drowned": False,
                "method": "bm25",
            },
        ],  # fmt: skip
        "evidence": {"absent": 0.25, "share": 0.4, "metric": "gross margin"},
        "signals": [{"name": "gold drowned in its chunk", "strength": 0.7}],
    }
    x = ceiling.numbers(failure)
    assert (x["method:late"], x["method:naive"], x["own_rank"]) == (1.0, 0.0, 30)
    assert (x["other_best"], x["other_finds"]) == (1, 1.0)
    assert (x["boundary:tried"], x["boundary:fixes"], x["boundary:gain"]) == (1.0, 1.0, 26)
    assert (x["context:after"], x["context:gain"], x["parse:tried"]) == (200, -170, 0.0)
    assert (x["absent"], x["share"], x["metric"], x["copy"]) == (0.25, 0.4, 1.0, 0.0)
    assert x["signal:gold drowned in its chunk"] == 0.7


def test_the_features_file_agrees_with_each_sets_files():
    rows = [
        json.loads(line)
        for line in (BLIND / "ceiling" / "features.jsonl").read_text().splitlines()
        if line.strip()
    ]
    by_set: dict[str, list[dict]] = {}
    for row in rows:
        by_set.setdefault(row["set"], []).append(row)
    assert set(by_set) >= {"set7", "set15", "set17", "set16", "set18", "set19", "set20", "set21"}
    for name, part in by_set.items():
        a = _rows(BLIND / name / "judgement_a.jsonl")
        b = _rows(BLIND / name / "judgement_b.jsonl")
        assert all(
            a[r["case"]]["cause"] == r["a"] and b[r["case"]]["cause"] == r["b"] for r in part
        )
        assert len(part) == len(a), name  # every judged failure has its row
    kept = {"set16": "suggested_round4.jsonl"}  # the rules of the features file
    for name in ("set16", "set18", "set19", "set20", "set21"):  # measured blind
        said = _rows(BLIND / name / kept.get(name, "suggested_now.jsonl"))
        assert all(said[r["case"]]["cause"] == r["suggested"] for r in by_set[name]), name
