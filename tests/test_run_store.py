"""One store of runs: every run ``eval`` and ``import-run`` make is kept in the store's
``runs/`` folder, where the workbench's Evaluate page lists it; ``--out`` is a copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import methods as method_registry
from core.cli import main, options
from core.cli.open_cmd import launch
from core.errors import LabelError
from core.evaluate import load_run
from core.evaluate.run_store import keep_run, run_files, runs_folder
from core.imported import save_chunk_set
from core.library import Library
from tests.test_app_engine_pages import fake
from tests.test_app_pages import html_of, open_page, plain, store_dir
from tests.test_eval_runner import FakeEncoder, fake_embed_chunks
from tests.test_import_run import HITS, jsonl, port
from workbench.state import EvalKey

__all__ = ["fake", "port", "store_dir"]  # fixtures, imported for pytest

TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def _forget_the_retriever():
    yield
    method_registry.unregister("yours")


def cli_runs(port, store_dir: Path, monkeypatch, capsys) -> tuple[str, str, Path]:
    """An ``import-run`` with ``--out`` and an ``eval`` without, neither naming a store."""
    _, chunk_set, labels, tmp = port
    save_chunk_set(store_dir / "chunksets", chunk_set)
    (tmp / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    (tmp / "log.jsonl").write_bytes(jsonl(HITS))
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    copy = tmp / "copy.json"
    argv = ["import-run", str(tmp / "log.jsonl"), "--chunks", "harbour", "--queries",
            str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"), "--methods", "none",
            "--k", "1", "--out", str(copy)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    imported = load_run(copy).run_id
    assert f"kept {imported} in {store_dir.resolve() / 'runs'}" in capsys.readouterr().err
    argv = ["eval", "--queries", str(tmp / "q.jsonl"), "--docs", str(tmp / "harbour.md"),
            "--methods", "bm25", "--k", "1", "--resamples", "50"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    made = capsys.readouterr().err
    evaluated = made.split("kept ", 1)[1].split()[0]
    return imported, evaluated, copy


def test_cli_runs_are_kept_in_the_store_and_out_is_a_copy(
    port, store_dir, monkeypatch, capsys
) -> None:
    imported, evaluated, copy = cli_runs(port, store_dir, monkeypatch, capsys)
    folder = runs_folder()
    assert folder == store_dir.resolve() / "runs"
    kept = run_files(folder)
    assert {p.stem for p in kept} == {imported, evaluated}
    assert kept[0].stem == evaluated  # newest first
    assert load_run(folder / f"{imported}.json").to_dict() == load_run(copy).to_dict()
    assert not list(folder.glob("*.part"))  # written aside, moved in
    other = store_dir.parent / "elsewhere"
    assert runs_folder(other) == other.resolve() / "runs"
    assert keep_run(load_run(copy), runs_folder(other)).parent == other.resolve() / "runs"


def test_a_run_made_on_the_command_line_is_listed_on_evaluate(
    fake, port, store_dir, monkeypatch, capsys
) -> None:
    imported, evaluated, _ = cli_runs(port, store_dir, monkeypatch, capsys)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at = open_page(at, "evaluate")
    picker = at.selectbox(key=EvalKey.RUN)
    assert len(picker.options) == 2 and picker.value == evaluated, picker.options  # newest
    assert any(o.endswith("· harbour · yours · 3 queries") for o in picker.options)
    picker.set_value(imported).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "3 queries · policy harbour · top 1" in [h.value for h in at.subheader]


def test_open_keeps_the_run_and_builds_the_workbench_command(
    port, store_dir, monkeypatch, capsys
) -> None:
    imported, _, copy = cli_runs(port, store_dir, monkeypatch, capsys)
    elsewhere = store_dir.parent / "other-store"
    found = launch(copy, store=str(elsewhere), port=8600)
    assert found.kept == elsewhere.resolve() / "runs" / f"{imported}.json" and found.kept.is_file()
    assert found.argv[1:4] == ("-m", "streamlit", "run")
    assert Path(found.argv[4]).name == "app.py" and Path(found.argv[4]).is_file()
    assert "--client.showSidebarNavigation=false" in found.argv  # the app's settings, as flags
    assert found.argv[-2:] == ("--server.port", "8600")
    assert found.env == {"CHUNKSCOPE_OPEN_RUN": imported,
                         "CHUNKSCOPE_STORE": str(elsewhere.resolve())}  # fmt: skip
    assert found.url == f"http://localhost:8600/evaluate?run={imported}"
    assert main(["open", str(copy), "--dry-run"]) == 0  # the default store: no STORE set
    printed = capsys.readouterr()
    assert printed.out.startswith(f"CHUNKSCOPE_OPEN_RUN={imported} ")
    assert "streamlit run" in printed.out and "CHUNKSCOPE_STORE" not in printed.out
    assert f"the workbench opens it at http://localhost:8501/evaluate?run={imported}" in printed.err
    assert main(["open", str(store_dir.parent / "nope.json"), "--dry-run"]) != 0
    assert "not found" in capsys.readouterr().err


def test_the_workbench_opens_the_run_it_was_started_on(
    fake, port, store_dir, monkeypatch, capsys
) -> None:
    imported, evaluated, _ = cli_runs(port, store_dir, monkeypatch, capsys)
    monkeypatch.setenv("CHUNKSCOPE_OPEN_RUN", imported)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=EvalKey.RUN).value == imported  # not the newest run
    assert "3 queries · policy harbour · top 1" in [h.value for h in at.subheader]
    shown = html_of(at)
    failed = [q.query for q in load_run(runs_folder() / f"{imported}.json").queries
              if q.failed["yours"]]  # fmt: skip
    assert any(f'<div class="cs-query">{text}</div>' in shown for text in failed), failed
    at.selectbox(key=EvalKey.RUN).set_value(evaluated).run()  # the picker moves on after
    assert at.selectbox(key=EvalKey.RUN).value == evaluated


def test_a_run_link_the_store_does_not_hold_is_said(
    fake, port, store_dir, monkeypatch, capsys
) -> None:
    _, evaluated, _ = cli_runs(port, store_dir, monkeypatch, capsys)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at = open_page(at, "evaluate", run="run-0000000000000000")
    said = [plain(w.value) for w in at.warning]
    assert any("run-0000000000000000 is not in this store's runs" in w for w in said), said
    assert at.selectbox(key=EvalKey.RUN).value == evaluated  # the newest, as without a link


def test_evaluate_without_runs_names_the_folder_the_cli_keeps_them_in(fake, store_dir) -> None:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at = open_page(at, "evaluate")
    said = " ".join(plain(c.value) for c in at.caption)
    assert f"they are kept in {store_dir.resolve() / 'runs'}" in said, said


def test_open_with_docs_keeps_the_runs_documents_for_the_reader(
    port, store_dir, monkeypatch, capsys
) -> None:
    _, _, copy = cli_runs(port, store_dir, monkeypatch, capsys)
    tmp = port[3]
    folder = tmp / "filings"
    folder.mkdir()
    (folder / "harbour.md").write_bytes((tmp / "harbour.md").read_bytes())
    (folder / "other.md").write_text("# Another document\n\nNot one the run ranked.\n")
    elsewhere = store_dir.parent / "opened-store"
    argv = ["open", str(copy), "--store", str(elsewhere), "--docs", str(folder), "--dry-run"]
    assert main(argv) == 0
    assert "kept 1 of the run's 1 documents in the store's library" in capsys.readouterr().err
    library = Library.in_folder(elsewhere.resolve() / "library")
    assert [(e.doc_id, e.sha256) for e in library.current()] == list(load_run(copy).corpus.items())
    # the workbench opened on that store reads them, though nothing is indexed there yet
    assert not (elsewhere / "chroma.sqlite3").exists()
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(elsewhere))
    monkeypatch.setenv("CHUNKSCOPE_OPEN_RUN", load_run(copy).run_id)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "not loaded" not in captions, captions  # the gold on its page
    # the run's chunks are an imported set: it came along, so the pages chunk as the run did
    assert (elsewhere / "chunksets" / "harbour.json").is_file()
    assert not [i for i in at.info if "which this session cannot chunk with" in i.value]
    # a store holding another set of that name: refused in one line, nothing kept
    third = store_dir.parent / "third-store"
    (third / "chunksets").mkdir(parents=True)
    (third / "chunksets" / "harbour.json").write_text("{}")
    with pytest.raises(LabelError, match="another chunk set of the name harbour"):
        launch(copy, store=str(third))
    assert not (third / "runs").exists()
    (elsewhere / "chunksets" / "harbour.json").unlink()  # a store without the set: said
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [i for i in at.info if "come from harbour, which this session cannot chunk with" in
            plain(i.value)]  # fmt: skip
    (folder / "harbour.md").write_text("# Harbour, edited since the run\n")  # other bytes
    assert main([*argv[:3], str(store_dir.parent / "third"), *argv[4:]]) == 0
    err = capsys.readouterr().err
    assert "kept 0 of the run's 1 documents" in err and "not among --docs: harbour" in err


def test_a_run_whose_documents_are_not_here_shows_the_suggestion_it_stored(
    fake, port, store_dir, monkeypatch, capsys
) -> None:
    imported, _, _ = cli_runs(port, store_dir, monkeypatch, capsys)
    run = load_run(runs_folder() / f"{imported}.json")  # kept without --out
    stored = {s.cause for q in run.queries for s in q.suggested.values()}
    assert stored  # each failure's suggested cause is kept with the run
    monkeypatch.setenv("CHUNKSCOPE_OPEN_RUN", imported)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = html_of(at)
    assert "<b>Why it failed</b>, as stored with the run · suggested:" in shown
    assert any(f">{cause}</b>" in shown for cause in stored), stored
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "the suggestion above is the one stored with the run" in captions
    assert "chunkscope open RUN.json --docs FILES" in captions
