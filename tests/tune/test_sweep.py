"""Sweeps: every cell is the evaluation `eval` gives for that policy; grids, resume, cancel.

The small shared set of ``conftest.py``; the fake encoder stands in for the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.chunk import PolicyError
from core.cli import main
from core.evaluate import EvalConfig
from core.formats import load_document
from core.tune import (
    SweepCancelled,
    load_sweep,
    parse_grid,
    parse_overlaps,
    parse_sizes,
    run_sweep,
)
from tests.fakes import FakeEncoder, fake_embed_chunks
from tests.tune.conftest import small_docs


def _common(root: Path) -> list[str]:
    docs = ["--docs", *small_docs(), "--policy", "fixed"]  # sizes below are in characters
    return ["--queries", str(root / "q.jsonl"), *docs, "--k", "1,5", "--json"]


def test_each_cell_is_what_eval_gives_for_its_policy(small_set: Path, fake_model, capsys) -> None:
    methods = "naive,bm25"
    args = ["sweep", *_common(small_set), "--size", "400,800", "--overlap", "10%"]
    assert main([*args, "--methods", methods]) == 0
    sweep = json.loads(capsys.readouterr().out)
    cells = sweep["cells"]
    assert [(c["policy"]["size"], c["method"]) for c in cells] == [
        (400, "naive"), (400, "bm25"), (800, "naive"), (800, "bm25"),
    ]  # fmt: skip
    for size, overlap in ((400, 40), (800, 80)):
        extra = ["--size", str(size), "--overlap", str(overlap), "--methods", methods]
        assert main(["eval", *_common(small_set), *extra]) == 0
        run = json.loads(capsys.readouterr().out)
        mine = [c for c in cells if c["policy"]["size"] == size]
        assert {c["run_id"] for c in mine} == {run["run_id"]}
        for cell in mine:
            assert cell["metrics"] == run["metrics"][cell["method"]]
            assert cell["n"] == run["n"][cell["method"]]
            assert cell["cost"]["vectors"] > 0
    assert cells[0]["metrics"] != cells[2]["metrics"]  # the size changes the numbers


def test_the_sweep_file_resumes_and_prints_a_table(small_set: Path, fake_model, capsys) -> None:
    out = small_set / "sweep.json"
    args = ["sweep", *_common(small_set)[:-1], "--size", "600", "--methods", "naive,bm25"]
    assert main([*args, "--out", str(out)]) == 0
    first = load_sweep(out)
    table = capsys.readouterr().out
    assert "fixed-chars-600-0" in table and "bm25" in table and "vectors" in table
    assert main([*args, "--size", "600,900", "--out", str(out)]) == 0
    capsys.readouterr()
    second = load_sweep(out)
    assert [p.policy.key for p in second.points] == ["fixed-chars-600-0", "fixed-chars-900-0"]
    assert second.points[0].run.created_at == first.points[0].run.created_at  # kept, not rerun


def test_a_cancelled_sweep_keeps_its_finished_points(small_set: Path) -> None:
    from core.evaluate import read_queries

    queries = read_queries(small_set / "q.jsonl")
    docs = [load_document(p) for p in small_docs()]
    grid = parse_grid(["fixed"], (500, 700), ("0",))
    template = EvalConfig(policy=grid[0].policy, methods=("naive",), ks=(1, 5))
    seen: list[tuple[int, int, int, int]] = []

    def progress(point: int, points: int, done: int, total: int) -> None:
        seen.append((point, points, done, total))

    with pytest.raises(SweepCancelled) as stopped:
        run_sweep(
            queries, docs, grid, template, encoder=FakeEncoder(), embed=fake_embed_chunks,
            progress=progress, cancelled=lambda: any(s[0] == 1 for s in seen),
        )  # fmt: skip
    assert [p.policy.key for p in stopped.value.sweep.points] == ["fixed-chars-500-0"]
    assert seen[0][1] == 2 and seen[-1][2] <= seen[-1][3]
    done = run_sweep(
        queries, docs, grid, template, encoder=FakeEncoder(), embed=fake_embed_chunks,
        resume=stopped.value.sweep,
    )  # fmt: skip
    assert done.points[0] is stopped.value.sweep.points[0]
    assert [p.policy.key for p in done.points] == ["fixed-chars-500-0", "fixed-chars-700-0"]


def test_grid_parsing() -> None:
    assert parse_sizes("64, 128") == (64, 128)
    assert parse_overlaps("0,10%,20") == ("0", "10%", "20")
    grid = parse_grid(["fixed"], (100, 200), ("0", "25%"), "tokens")
    assert [g.policy.key for g in grid] == [
        "fixed-tokens-100-0", "fixed-tokens-100-25", "fixed-tokens-200-0", "fixed-tokens-200-50",
    ]  # fmt: skip
    for bad in ("a", "0", ""):
        with pytest.raises(PolicyError):
            parse_sizes(bad)
    for bad in ("x", "100%", "-1"):
        with pytest.raises(PolicyError):
            parse_overlaps(bad)
    with pytest.raises(PolicyError, match="not below size"):
        parse_grid(["fixed"], (10,), ("10",))


def test_sweep_user_errors(small_set: Path, fake_model, capsys) -> None:
    base = ["sweep", "--queries", str(small_set / "q.jsonl"), "--docs", *small_docs()]
    assert main([*base, "--size", "abc"]) == 2
    assert capsys.readouterr().err.startswith("error: --size takes")
    assert main([*base, "--size", "100", "--policy", "nope"]) == 2
    assert "unknown policy" in capsys.readouterr().err
    (small_set / "bad.json").write_text("{}", "utf-8")
    assert main([*base, "--size", "100", "--out", str(small_set / "bad.json")]) == 2
    assert "not a Chunkscope sweep file" in capsys.readouterr().err
