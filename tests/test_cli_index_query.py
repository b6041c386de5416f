"""``chunkscope index`` and ``chunkscope query``: JSON contract, summaries, user errors.

Most tests swap the model for the trigram fake (same CLI code path, milliseconds); the
``slow`` ones run the real model through ``python -m core``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PDF_DIR
from fakes import FakeEncoder, fake_embed_chunks

import core.embed
import core.methods.embedding
from core import methods
from core.cli import main

ROOT = Path(__file__).resolve().parent.parent
PUMP = """# Pump P-200

## Overheating

When the motor passes 90 degrees Celsius, the unit stops and the red lamp blinks.

## Cleaning

Rinse the intake grille every month; the unit keeps its airflow steady.
"""
LEDGER = (
    "A ledger records every payment made by the shop, with its date and amount.\n\n"
    "Entries are never edited, only reversed by a new entry that cancels them.\n"
)
FIXED = ["--policy", "fixed", "--size", "100", "--overlap", "0"]


@pytest.fixture()
def fake_model(monkeypatch):
    monkeypatch.setattr(core.embed, "load_encoder", lambda *a, **k: FakeEncoder())
    monkeypatch.setattr(core.methods.embedding, "embed_chunks", fake_embed_chunks)


@pytest.fixture()
def folder(tmp_path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "pump.md").write_text(PUMP, encoding="utf-8")
    (docs / "sub" / "ledger.txt").write_text(LEDGER, encoding="utf-8")
    (docs / ".hidden" / "skip.md").write_text("not indexed", encoding="utf-8")
    (docs / "table.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return docs


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_index_folder_then_query_json(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    rc, out, _ = cli(capsys, "index", folder, *FIXED, "--store", store, "--json")
    assert rc == 0
    report = json.loads(out)
    assert [d["doc_id"] for d in report["documents"]] == ["pump", "ledger"]
    every = list(methods.base_methods())  # the default: every registered method
    assert all(d["indexed"] == every for d in report["documents"])
    rc, out, err = cli(capsys, "query", "motor too hot", "--store", store, "--k", "2", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["query"] == "motor too hot" and data["k"] == 2
    assert list(data["results"]) == every
    for rows in data["results"].values():
        assert [r["rank"] for r in rows] == [1, 2]
        for r in rows:
            assert {
                "rank",
                "chunk_id",
                "score",
                "char_start",
                "char_end",
                "pages",
                "citation",
                "text",
            } <= set(r)
            assert r["citation"] == f"{r['doc_id']}, chars {r['char_start']}-{r['char_end']}"
            source = PUMP if r["doc_id"] == "pump" else LEDGER
            assert source[r["char_start"] : r["char_end"]] == r["text"]
    listed = {h["chunk_id"] for rows in data["results"].values() for h in rows}
    assert {c["chunk_id"] for c in data["rank_changes"]} == listed
    for change in data["rank_changes"]:
        assert set(change["ranks"]) == set(every)
        assert all(isinstance(r, int) and r >= 1 for r in change["ranks"].values())


def test_index_summary_lines_and_rerun_skips(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    rc, out, _ = cli(capsys, "index", folder, *FIXED, "--methods", "naive", "--store", store)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("pump: ") and "indexed naive" in lines[0]
    assert lines[1].startswith("ledger: 2 chunks indexed naive")
    assert lines[-1].startswith("done: 2/2 files")
    rc, out, _ = cli(capsys, "index", folder, *FIXED, "--methods", "naive,late", "--store", store)
    assert rc == 0
    assert "indexed late already stored naive" in out.splitlines()[0]


def test_query_text_output_is_side_by_side(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    cli(capsys, "index", folder, *FIXED, "--methods", "naive,late", "--store", store)
    rc, out, _ = cli(capsys, "query", "ledger payment", "--store", store, "--k", "3")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "query: ledger payment"
    header = next(line for line in lines if line.startswith("rank "))
    assert header.index("naive") < header.index("late")
    assert any(line.startswith("   1 ") and line.count("chars ") == 2 for line in lines)
    assert "rank under naive / late" in out


def test_query_one_document(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    cli(capsys, "index", folder, *FIXED, "--store", store)
    rc, out, _ = cli(capsys, "query", "payment", "--doc", "ledger", "--store", store, "--json")
    data = json.loads(out)
    assert rc == 0 and data["doc_id"] == "ledger"
    assert {r["doc_id"] for rows in data["results"].values() for r in rows} == {"ledger"}
    assert data["scope_sizes"] == dict.fromkeys(methods.base_methods(), 2)


def test_pdf_citations_name_pages(fake_model, tmp_path, capsys):
    store = tmp_path / "store"
    pdf = PDF_DIR / "pypdfsf_pdflatex-outline.pdf"
    rc, _, err = cli(capsys, "index", pdf, *FIXED, "--methods", "naive", "--store", store)
    assert rc == 0, err
    rc, out, _ = cli(capsys, "query", "outline", "--store", store, "--k", "5", "--json")
    rows = json.loads(out)["results"]["naive"]
    assert rows and all(r["pages"] for r in rows)
    for r in rows:
        pages = r["pages"]
        where = f"p. {pages[0]}" if len(pages) == 1 else f"pp. {pages[0]}-{pages[-1]}"
        assert r["citation"] == f"{r['doc_id']}, {where}, chars {r['char_start']}-{r['char_end']}"


def test_policy_is_taken_from_the_index_unless_ambiguous(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    cli(capsys, "index", folder / "pump.md", *FIXED, "--store", store)
    rc, out, _ = cli(capsys, "query", "lamp", "--store", store, "--json")
    assert rc == 0 and json.loads(out)["policy"]["size"] == 100
    cli(capsys, "index", folder / "pump.md", "--policy", "sentence", "--store", store)
    rc, out, err = cli(capsys, "query", "lamp", "--store", store, "--json")
    assert rc == 2 and out == ""
    assert err.startswith("error: the index holds several policies")
    rc, out, _ = cli(capsys, "query", "lamp", "--store", store, "--policy", "sentence", "--json")
    assert rc == 0 and json.loads(out)["policy"]["name"] == "sentence"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "x"], "error: nothing indexed"),
        (
            ["query", "x", *FIXED],
            "error: nothing indexed for fake-trigram under policy fixed-chars-100-0",
        ),
        (["query", "x", "--policy", "bogus"], "error: unknown policy 'bogus'"),
        (["query", "x", *FIXED, "--methods", "naive,smart"], "error: unknown method 'smart'"),
        (["query", "x", "--k", "0"], "error: --k must be at least 1"),
        (["query", " \t", *FIXED], "error: the query is empty"),
        (["index", "missing.pdf", "--store", "S"], "error: missing.pdf does not exist"),
        (["index", "D", "--policy", "nope"], "error: unknown policy 'nope'"),
        (["index", "D", "--size", "0"], "error: --size must be at least 1"),
        (["index", "D", "--parser", "magic"], "error: unknown parser 'magic'"),
        (["index", "D", "--chroma-host", "nohost"], "error: expected HOST:PORT"),
        (["index", "D", "--store", "S", "--chroma-host", "h:1"], "error: pass either"),
    ],
)
def test_user_errors_exit_2_with_one_line(fake_model, tmp_path, capsys, argv, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    (tmp_path / "D").mkdir()
    (tmp_path / "D" / "a.txt").write_text("some text here", encoding="utf-8")
    rc, out, err = cli(capsys, *argv, "--json")
    assert rc == 2
    assert out == ""
    assert err.strip().splitlines()[-1].startswith(message), err


def test_two_files_with_one_document_id_are_refused_before_anything_is_stored(
    fake_model, folder, tmp_path, capsys
):
    """``a/pump.md`` and ``b/pump.txt`` would both be ``pump``: the second would silently
    replace the first's records, so the run refuses with one line and stores nothing."""
    (folder / "sub" / "pump.txt").write_text("Zebras migrate in the dry season.", encoding="utf-8")
    store = tmp_path / "store"
    rc, out, err = cli(capsys, "index", folder, *FIXED, "--store", store, "--json")
    assert rc == 2 and out == ""
    assert err.strip() == (
        f"error: {folder / 'pump.md'} and {folder / 'sub' / 'pump.txt'} would share the "
        "document id 'pump' (its file name without the extension): rename one of them"
    )
    rc, _, err = cli(capsys, "query", "zebra", "--store", store, "--json")
    assert rc == 2 and err.startswith("error: nothing indexed")


def test_unknown_document_is_a_user_error(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    cli(capsys, "index", folder, *FIXED, "--store", store)
    rc, out, err = cli(capsys, "query", "x", "--doc", "nope", "--store", store, "--json")
    assert rc == 2 and out == "" and err.startswith("error: no document 'nope' indexed for")
    rc, out, err = cli(
        capsys, "query", "x", "--doc", "nope", "--methods", "late", "--store", store, "--json"
    )
    assert rc == 2 and out == "" and err.startswith("error: no chunks of 'nope' indexed")


def test_default_methods_are_those_holding_the_document(fake_model, folder, tmp_path, capsys):
    store = tmp_path / "store"
    cli(capsys, "index", folder / "pump.md", *FIXED, "--methods", "naive,late", "--store", store)
    cli(capsys, "index", folder / "sub", *FIXED, "--methods", "naive", "--store", store)
    rc, out, _ = cli(capsys, "query", "x", "--doc", "ledger", "--store", store, "--json")
    assert rc == 0 and json.loads(out)["methods"] == ["naive"]
    rc, out, _ = cli(capsys, "query", "x", "--store", store, "--json")
    assert rc == 0 and json.loads(out)["methods"] == ["naive", "late"]


def test_a_bad_file_among_good_ones_exits_2(fake_model, folder, tmp_path, capsys):
    (folder / "empty.txt").write_bytes(b"")
    rc, out, _ = cli(capsys, "index", folder, *FIXED, "--store", tmp_path / "s", "--json")
    assert rc == 2
    docs = {d["doc_id"]: d for d in json.loads(out)["documents"]}
    assert docs["empty"]["error"].startswith("empty.txt is empty")
    assert docs["pump"]["indexed"] and docs["ledger"]["indexed"]


def test_store_location_from_environment(fake_model, folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "envstore"))
    monkeypatch.chdir(tmp_path)
    rc, out, _ = cli(capsys, "index", folder / "pump.md", *FIXED, "--json")
    assert rc == 0 and json.loads(out)["store"] == str((tmp_path / "envstore").resolve())
    assert (tmp_path / "envstore").is_dir() and not (tmp_path / ".chunkscope").exists()


def run_cli(*argv: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNKSCOPE_STORE": str(cwd / "store")}
    return subprocess.run(
        [sys.executable, "-m", "core", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
    )


@pytest.mark.slow
def test_real_model_index_and_query(tmp_path):
    manual = tmp_path / "pump.md"
    manual.write_text(PUMP + "\n## Warranty\n\nParts and labour are covered for three years.\n")
    done = run_cli("index", manual, "--policy", "fixed", "--size", "120", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pump: ")
    assert "indexed " + ",".join(methods.base_methods()) in done.stdout
    asked = run_cli("query", "How long is the guarantee?", "--k", "1", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    data = json.loads(asked.stdout)
    for method in ("naive", "late", "contextual"):
        (top,) = data["results"][method]
        assert "three years" in top["text"], (method, top)
        assert 0.2 < top["score"] <= 1.0 and top["score_kind"] == "cosine"
    assert data["score_kinds"]["bm25"] == "bm25"  # "guarantee" is not a word of the text
