"""Tune on anything: an uploaded query set over the library's documents, the expected
cost before a sweep, and every sweep of the store listed, those `chunkscope sweep` ran
included (it keeps each one in the store's ``sweeps/``, ``--out`` or not)."""

from __future__ import annotations

import json
from pathlib import Path

from core.cli import main
from core.tune import load_sweep, store_sweeps_dir
from tests.test_app_tune import _open, fake  # noqa: F401 (a fixture)
from tests.tune.conftest import fake_model, small_docs, small_set  # noqa: F401 (fixtures)
from workbench.state import EvalKey, TuneKey


def test_a_cli_sweep_lands_in_the_store_and_the_tune_page_lists_it(
    small_set: Path,  # noqa: F811
    fake_model,  # noqa: F811
    tmp_path: Path,
    capsys,
) -> None:
    out = tmp_path / "elsewhere" / "mine.json"
    args = ["sweep", "--queries", str(small_set / "q.jsonl"), "--docs", *small_docs(),
            "--size", "400,800", "--methods", "naive,bm25", "--json",
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    sweep_id = json.loads(capsys.readouterr().out)["sweep_id"]
    kept = store_sweeps_dir() / f"{sweep_id}.json"
    assert kept.is_file() and out.is_file()  # the store's copy and the asked one
    assert load_sweep(kept).sweep_id == sweep_id
    at = _open()
    assert at.selectbox(key=TuneKey.SWEEP).value == sweep_id  # listed, and shown first


def test_the_tune_page_sweeps_an_uploaded_set_and_says_the_cost_first(fake):  # noqa: F811
    evidence = [{"text": "The manufacturer guarantees the unit for two years"}]
    line = {"id": "q1", "query": "warranty", "doc": "datasheet-corvane-hx40", "evidence": evidence}
    at = _open()
    at.segmented_control(key=EvalKey.SOURCE).set_value("upload").run()
    files = [("set.jsonl", json.dumps(line).encode(), "application/jsonl")]
    at.file_uploader(key=EvalKey.UPLOAD).set_value(files).run()
    assert not at.exception, [e.value for e in at.exception]
    caption = " ".join(c.value for c in at.caption)
    assert "1 queries · 1 documents" in caption
    assert "Expected cost: " in caption and "texts to embed" in caption
    assert not [b for b in at.button if b.label == "Sweep"][0].disabled
