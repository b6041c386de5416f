"""Your failures first, ours after: ``import-run`` keeps the run with your retriever alone
in the store before our methods are computed, then adds them to the same run (same id,
same file); stopped while ours are computed, the kept run stays yours and says which
methods were never added, on the command line and on the Evaluate page. (The page's own
import, ours in the background: ``tests/test_app_import_chunks.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from streamlit.testing.v1 import AppTest

from core import methods as method_registry
from core.cli import main, options
from core.evaluate import load_run
from core.evaluate.imported_run import pending_methods, pending_state
from core.evaluate.run_store import run_files
from core.imported import save_chunk_set
from tests.test_app_engine_pages import fake
from tests.test_app_pages import open_page, plain, store_dir
from tests.test_import_run import HITS, jsonl, port
from workbench.state import EvalKey

__all__ = ["fake", "port", "store_dir"]  # fixtures


@pytest.fixture(autouse=True)
def _forget_the_retriever():
    yield
    method_registry.unregister("yours")


def import_argv(port, methods: str, *extra: str) -> tuple[list[str], Path]:
    """``import-run`` of the harbour log into the store ``tmp/store``; the runs folder."""
    _, chunk_set, labels, tmp = port
    store = tmp / "store"
    save_chunk_set(store / "chunksets", chunk_set)
    (tmp / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    (tmp / "log.jsonl").write_bytes(jsonl(HITS))
    argv = ["import-run", str(tmp / "log.jsonl"), "--chunks", "harbour", "--queries",
            str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"), "--store", str(store),
            "--methods", methods, "--k", "1", *extra]  # fmt: skip
    return argv, store.resolve() / "runs"


def use_embed(monkeypatch, embed) -> None:
    monkeypatch.setattr(options, "load_model", lambda args: (FakeEncoder(), embed, None))


def test_yours_is_kept_before_ours_are_computed_then_they_join_the_same_run(
    port, monkeypatch, capsys
) -> None:
    seen: list[list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = []
    argv, folder = import_argv(port, "naive,bm25")

    def embed(*args, **kwargs):  # the store as it is when ours start to embed
        if not seen:
            seen.append([(p.stem, (r := load_run(p)).methods, pending_methods(r))
                         for p in run_files(folder)])  # fmt: skip
        return fake_embed_chunks(*args, **kwargs)

    use_embed(monkeypatch, embed)
    assert main(argv) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    [[(first_id, methods, pending)]] = seen  # one run, yours alone, ours pending
    assert methods == ("yours",) and pending == ("naive", "bm25")
    kept = run_files(folder)
    assert [p.stem for p in kept] == [first_id]  # the same run, grown: one file
    run = load_run(kept[0])
    assert run.methods == ("yours", "naive", "bm25")
    assert not pending_methods(run) and pending_state(run) is None
    assert {"naive-yours", "bm25-yours", "bm25-naive"} == set(run.deltas)
    assert f"kept {first_id} in {folder} with yours alone (3 queries" in err
    assert f"read it now: chunkscope open {folder / f'{first_id}.json'}" in err
    assert f"adding naive, bm25 to {first_id}" in err
    assert err.index("with yours alone") < err.index(f"kept {first_id} in {folder} (the work")
    # each method of each failure has its own suggestion, yours read beside ours
    failed = [(q, m) for q in run.queries for m in run.methods if q.failed[m]]
    assert failed
    for record, method in failed:
        assert record.suggested[method].cause


def test_stopped_while_ours_are_computed_the_run_keeps_yours_and_says_what_is_missing(
    port, monkeypatch, capsys
) -> None:
    out = port[3] / "copy.json"
    argv, folder = import_argv(port, "naive,bm25", "--out", str(out))

    def interrupted(*args, **kwargs):  # Ctrl-C while ours embed
        raise KeyboardInterrupt

    use_embed(monkeypatch, interrupted)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "stopped: naive, bm25 were not added" in err and "import the run again" in err
    kept = run_files(folder)
    assert len(kept) == 1
    run = load_run(kept[0])  # a valid run file: yours alone, the missing methods named
    assert run.methods == ("yours",)
    assert pending_methods(run) == ("naive", "bm25") and pending_state(run) == "stopped"
    assert run.metrics["yours"]["mrr"] == pytest.approx(0.611, abs=1e-3)
    assert load_run(out).to_dict() == run.to_dict()  # --out is the same stopped run
    assert main(["triage", "sample", str(kept[0]), "--method", "yours"]) == 0

    use_embed(monkeypatch, fake_embed_chunks)  # imported again: the same run, completed
    assert main(argv) == 0, capsys.readouterr().err
    again = run_files(folder)
    assert [p.stem for p in again] == [kept[0].stem]
    assert load_run(again[0]).methods == ("yours", "naive", "bm25")
    assert not pending_methods(load_run(again[0]))


def test_methods_none_keeps_one_run_with_nothing_pending(port, monkeypatch, capsys) -> None:
    argv, folder = import_argv(port, "none")
    use_embed(monkeypatch, fake_embed_chunks)
    assert main(argv) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "adding" not in err and "with yours alone" not in err
    [kept] = run_files(folder)
    run = load_run(kept)
    assert run.methods == ("yours",) and "pending_methods" not in run.imported


def test_a_run_the_command_line_stopped_says_so_on_evaluate(
    fake, port, store_dir, monkeypatch, capsys
) -> None:
    argv, _ = import_argv(port, "naive,bm25")
    argv[argv.index("--store") + 1] = str(store_dir)
    save_chunk_set(store_dir / "chunksets", port[1])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    use_embed(monkeypatch, interrupted)
    assert main(argv) == 130
    at = AppTest.from_file("../app.py", default_timeout=60).run()
    at = open_page(at, "evaluate")
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(plain(w.value) for w in at.warning)
    assert "naive, bm25 were not added to this run" in said, said
    label = at.selectbox(key=EvalKey.RUN).options[0]
    assert label.endswith("· yours (naive, bm25 not added) · 3 queries"), label
    table = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    assert [c for c in table.columns if c not in ("metric", "n")] == ["yours"]
