"""The Tune page under ``streamlit.testing.v1.AppTest``: run a sweep of the demo set in the
background (fake encoder), read its curves, crossovers and best cells, open a cell's
failures on the Evaluate page and its boundaries on the Chunks page."""

from __future__ import annotations

import functools
import time

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from streamlit.testing.v1 import AppTest

from core import defaults
from core.chunk import policy_registry as registry
from core.evaluate import run_eval
from core.tune import load_sweep
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.state import (
    EvalKey,
    Key,
    TuneKey,
    policy_widget,
    size_widget,
    tune_own_overlaps_widget,
    tune_own_sizes_widget,
)
from workbench.tune import sweep_panel as ut

TIMEOUT_S = 300


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    enc = FakeEncoder()
    monkeypatch.setattr(eng, "encoder", lambda: enc)
    monkeypatch.setattr(ut, "embed_step", lambda: fake_embed_chunks)
    monkeypatch.setattr(run_files, "run_eval", functools.partial(run_eval, embed=fake_embed_chunks))
    return tmp_path / "store"


def _open() -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at.switch_page("pages/tune.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _sweep(at: AppTest) -> AppTest:
    [b for b in at.button if b.label == "Sweep"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state[TuneKey.JOB]
    deadline = time.monotonic() + 120
    while job.running and time.monotonic() < deadline:
        time.sleep(0.2)
    at.run()
    at.run()  # the job panel announces the result once, then the page reruns
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_sweep_runs_draws_its_curves_and_opens_a_cells_failures(fake):
    at = _open()
    assert any("No sweep yet" in i.value for i in at.info)
    at = _sweep(at)
    assert any("Swept 3 points × 3 methods" in s.value for s in at.success)
    files = list((fake / "sweeps").glob("sweep-*.json"))
    assert len(files) == 1
    sweep = load_sweep(files[0])
    assert [p.policy.key for p in sweep.points] == [  # the default policy, in tokens
        f"{defaults.POLICY}-tokens-{size}-0" for size in (64, 128, 256)
    ]
    chart = at.get("plotly_chart")[0].proto.spec
    for method in ("naive", "late", "bm25"):
        assert f'"name":"{method}"' in chart
    assert "tokens encoded" in chart or "index seconds" in chart
    best = at.dataframe[0].value
    assert set(best["metric"]) >= {"hit@1", "mrr", "ndcg@10"}
    top = sweep.cells()
    mrr = max(c.metrics["mrr"] for c in top)
    assert float(best.set_index("metric").loc["mrr", "best"]) == round(mrr, 3)

    late = next(c for c in top if c.method == "late" and c.policy.size == 128)
    at.session_state[TuneKey.CELL] = ut.cell_key(late)
    at.run()
    [b for b in at.button if b.label == "Its failures on the Evaluate page"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[EvalKey.RUN] == late.run_id
    assert (fake / "runs" / f"{late.run_id}.json").is_file()
    if any(q.failed["late"] for q in sweep.point(late.policy.key).run.queries):
        assert at.selectbox(key=EvalKey.TRIAGE_METHOD).value == "late"
    assert any(s.value == "Evaluate & triage" for s in at.title)


def test_a_cell_opens_its_boundaries_on_the_chunks_page(fake):
    at = _sweep(_open())
    keys = at.selectbox(key=TuneKey.CELL).options
    at.selectbox(key=TuneKey.CELL).set_value(keys[-1]).run()  # the largest size
    [b for b in at.button if b.label == "Its boundaries on the Chunks page"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value == "Chunks" for s in at.title)
    assert at.session_state[policy_widget("a")] == defaults.POLICY
    assert at.session_state[size_widget("a", defaults.POLICY, "tokens")] == 256
    assert at.session_state[Key.DOC] in {d for d in eng.demo_documents()}


@pytest.fixture
def forget_live_policies():
    yield
    for name in registry.policy_names():
        if registry.get(name).live:
            registry.unregister(name)


def test_your_own_splitter_swept_beside_ours_at_free_sizes_and_verdicts_that_never_overstate(
    fake, forget_live_policies
):
    pytest.importorskip("langchain_text_splitters")
    at = _open()
    at.text_input(key=TuneKey.LIVE_POLICY).set_value("langchain:RecursiveCharacterTextSplitter")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("in characters" in c.value and "your langchain" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
    # its own row: 400/800/1200 characters x 0/100 offered; free numbers typed instead
    own = at.multiselect(key=tune_own_sizes_widget("chars"))
    assert own.value == [400, 800, 1200]
    assert at.multiselect(key=tune_own_overlaps_widget("chars")).value == ["0", "100"]
    own.set_value([300, 700]).run()
    at.multiselect(key=tune_own_overlaps_widget("chars")).set_value(["0"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.checkbox(key=TuneKey.BESIDE).value  # ours beside it by default
    at.multiselect(key=TuneKey.METHODS).set_value(["naive"]).run()
    at = _sweep(at)
    assert any("Swept 5 points × 1 methods" in s.value for s in at.success)
    [sweep] = [load_sweep(f) for f in (fake / "sweeps").glob("sweep-*.json")]
    assert [p.policy.key for p in sweep.points] == [
        *(f"{defaults.POLICY}-tokens-{size}-0" for size in (64, 128, 256)),
        "langchain:RecursiveCharacterTextSplitter-chars-300-0",
        "langchain:RecursiveCharacterTextSplitter-chars-700-0",
    ]
    best = at.dataframe[0].value.set_index("metric")
    for _metric, row in best.iterrows():
        verdict = row["verdict"]
        assert verdict.startswith(("no policy is better", "no size is better")) or (
            "leads (intervals apart)" in verdict and "(" in verdict.split(" leads")[0]
        ), verdict  # with two policies, a leading size names its policy
        if verdict.startswith("no "):
            assert row["note"] == ""  # no grid advice from a tie
    side = at.dataframe[1].value  # each policy's best, side by side
    assert set(side["policy"]) == {defaults.POLICY, "langchain:RecursiveCharacterTextSplitter"}
    assert any(
        "no policy is better than another" in m.value or "leads on mrr" in m.value
        for m in at.markdown
    ), [m.value for m in at.markdown]


def test_your_own_splitter_alone(fake, forget_live_policies):
    pytest.importorskip("langchain_text_splitters")
    at = _open()
    at.text_input(key=TuneKey.LIVE_POLICY).set_value("langchain:RecursiveCharacterTextSplitter")
    at.run()
    at.checkbox(key=TuneKey.BESIDE).uncheck().run()
    at.multiselect(key=tune_own_sizes_widget("chars")).set_value([300, 700]).run()
    at.multiselect(key=tune_own_overlaps_widget("chars")).set_value(["0", "100"]).run()
    at.multiselect(key=TuneKey.METHODS).set_value(["naive"]).run()
    assert any("4 points × 1 methods" in c.value for c in at.caption)
    at = _sweep(at)
    [sweep] = [load_sweep(f) for f in (fake / "sweeps").glob("sweep-*.json")]
    assert [p.policy.key for p in sweep.points] == [
        "langchain:RecursiveCharacterTextSplitter-chars-300-0",
        "langchain:RecursiveCharacterTextSplitter-chars-300-100",
        "langchain:RecursiveCharacterTextSplitter-chars-700-0",
        "langchain:RecursiveCharacterTextSplitter-chars-700-100",
    ]
    assert len(at.dataframe) == 1  # one policy: no side-by-side table
