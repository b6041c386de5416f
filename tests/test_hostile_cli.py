"""Hostile input at the command line: argparse mistakes and file names that would split
an error line, document control characters in tables, the --max-* flags, and runs over
many files (index, eval) in which a bad file costs only its own line and the exit is 2;
an id already stored from another file is refused, never replaced."""

from __future__ import annotations

import json

import hostile_files as h
import pytest

import core.embed
import core.methods.embedding
from core.cli import main, options
from core.cli.one_line import escape_controls
from core.ingest import limits
from core.ingest.files import display_name
from tests.fakes import FakeEncoder, fake_embed_chunks

# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["chunk", "x.txt", "--policy", "fixed", "--size", "abc"],
        ["chunk", "x.txt", "--policy", "bogus"],
        ["parse"],
        ["frobnicate"],
        [],
    ],
)
def test_argparse_mistakes_are_one_error_line(argv: list[str], capsys) -> None:
    """Caught by argparse (exit 2, the command named) or, for a policy name, by the
    policy registry after parsing (exit 2, the registered names listed)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1, err
    if "bogus" in argv:
        assert err == "error: unknown policy 'bogus': use one of fixed, sentence, structure\n"
    else:
        assert err.startswith("error: chunkscope"), err


def test_a_file_name_with_a_newline_keeps_its_error_on_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "bad\nname\x1b[2J.pdf"
    path.write_bytes(b"not a pdf")
    assert main(["parse", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "\x1b" not in err
    assert "bad\\nname\\x1b[2J.pdf" in err


def test_tables_escape_the_control_characters_of_a_document(tmp_path, capsys) -> None:
    path = tmp_path / "ctl.txt"
    path.write_text("Hello \x1b[31mred\x07 text \x9b2J.\n\nOverwrite\r me.\n", "utf-8")
    for command in (["parse", str(path)], ["chunk", str(path), "--policy", "fixed"]):
        assert main(command) == 0
        out = capsys.readouterr().out
        assert not any(c in out for c in "\x1b\x07\x9b\r"), out
        assert "\\x1b[31mred\\x07" in out
    assert main(["parse", str(path), "--json", "--with-text"]) == 0
    assert "\x1b[31m" in json.loads(capsys.readouterr().out)["document"]["text"]


def test_escape_controls_keeps_text_and_breaks() -> None:
    assert escape_controls("a\tb\nc é 中") == "a\tb\nc é 中"
    assert escape_controls("a\nb", keep_breaks=False) == "a\\nb"
    assert escape_controls("\u202egnp.pdf") == "\\u202egnp.pdf"  # no reordered name
    assert display_name("My\u00a0Report (v2).pdf") == "My\u00a0Report (v2).pdf"
    assert display_name("two\nlines\t.pdf") == "two\\nlines\\t.pdf"


def test_limit_flags_reach_the_loader(tmp_path, capsys) -> None:
    path = tmp_path / "long.txt"
    path.write_text("word " * 500, "utf-8")
    assert main(["parse", str(path), "--max-chars", "100"]) == 2
    err = capsys.readouterr().err
    assert "over the limit of 100 characters a document" in err and "--max-chars" in err
    assert limits.value("chars") == limits.LIMITS["chars"].default  # for that command only


# -- runs over many files ---------------------------------------------------------------


@pytest.fixture()
def fake_model(monkeypatch):
    monkeypatch.setattr(core.embed, "load_encoder", lambda *a, **k: FakeEncoder())
    monkeypatch.setattr(core.methods.embedding, "embed_chunks", fake_embed_chunks)
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )


def test_index_reports_a_bad_file_and_indexes_the_good_one(fake_model, tmp_path, capsys):
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nThe good file has a sentence.\n", "utf-8")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(h.page_tree_cycle_pdf())
    store = tmp_path / "store"
    argv = ["index", str(good), str(bad), "--policy", "fixed", "--store", str(store)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "good: 1 chunk indexed" in out and "bad: error: bad.pdf is damaged" in out
    assert err.strip().splitlines()[-1] == "error: 1 of 2 files could not be indexed (see above)"


def test_a_second_file_with_the_same_id_never_replaces_the_first(fake_model, tmp_path, capsys):
    store = str(tmp_path / "store")
    first = tmp_path / "report.md"
    first.write_text("# Report\n\nThe first report.\n", "utf-8")
    other = tmp_path / "other"
    other.mkdir()
    second = other / "report.txt"
    second.write_text("A different file with the same stem.\n", "utf-8")
    base = ["--policy", "fixed", "--methods", "naive", "--store", store, "--json"]
    assert main(["index", str(first), *base]) == 0
    capsys.readouterr()
    assert main(["index", str(second), *base]) == 2
    report = json.loads(capsys.readouterr().out)
    assert "would replace the stored records of report.md" in report["documents"][0]["error"]
    assert main(["query", "first report", "--methods", "naive", "--store", store, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert "The first report." in json.dumps(hits)
    assert main(["index", str(second), *base, "--force"]) == 0  # asked for: replaced


def test_eval_reports_a_bad_file_and_scores_the_others(fake_model, tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# Notes\n\nThe harbour master logs every ship that docks after dark.\n"
    (docs / "notes.md").write_text(text, "utf-8")
    (docs / "broken.pdf").write_bytes(h.count_lie_pdf())
    start = text.index("The harbour")
    query = {
        "id": "q",
        "query": "ships",
        "doc": "notes",
        "gold": [{"char_start": start, "char_end": start + 20}],
    }
    (tmp_path / "q.jsonl").write_text(json.dumps(query) + "\n", "utf-8")
    argv = [
        "eval",
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--docs",
        str(docs),
        "--methods",
        "naive",
        "--json",
    ]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["n_queries"] == 1
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: broken.pdf is damaged")
    assert lines[-1] == "error: 1 of 2 files could not be read (see the lines above)"
