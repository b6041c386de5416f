"""A sweep of the user's own splitter (a live policy) beside a built-in policy: one cell
per size and method, each with its metrics and intervals, on the small shared set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.tune import load_sweep
from core.tune.curves import curves
from tests.test_live_policy import forget_live_policies
from tests.tune.conftest import small_docs

__all__ = ["forget_live_policies"]  # a fixture: no live policy stays registered

SPLITTER = "langchain:RecursiveCharacterTextSplitter"


def test_a_sweep_of_a_langchain_splitter_beside_structure(
    small_set: Path, fake_model, capsys
) -> None:
    pytest.importorskip("langchain_text_splitters")
    args = ["sweep", "--queries", str(small_set / "q.jsonl"), "--docs", *small_docs(),
            "--k", "1,5", "--json", "--policy", f"structure,{SPLITTER}",
            "--size", "200,400", "--overlap", "0", "--methods", "naive",
            "--out", str(small_set / "live.json")]  # fmt: skip
    assert main(args) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    live = [c for c in cells if c["policy"]["name"] == SPLITTER]
    assert [(c["policy"]["size"], c["policy"]["unit"]) for c in live] == [
        (200, "chars"), (400, "chars"),
    ]  # fmt: skip
    assert {c["policy"]["name"] for c in cells} == {"structure", SPLITTER}
    for cell in live:
        assert set(cell["n"].values()) == {24} and cell["cost"]["vectors"] > 0
        assert 0 <= cell["metrics"]["hit@5"] <= 1 and cell["metrics"]["span_validity"] == 1.0
    assert live[0]["cost"]["vectors"] > live[1]["cost"]["vectors"]  # smaller pieces, more
    (line,) = curves(load_sweep(small_set / "live.json"), "hit@5", SPLITTER, "0")
    assert line.sizes == (200, 400)  # one point per size, each with its interval
    assert all(lo <= m <= hi for lo, m, hi in zip(line.lows, line.means, line.highs, strict=True))
