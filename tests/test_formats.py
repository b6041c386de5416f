"""The format registry: one spec per format, and a toy format registered in a test is
read by the loader, the parsers, the CLI, folder discovery and the Library page without
any other edit."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.cli.options import expand_docs
from core.errors import EmptyFileError, LabelError, NotAPdfError, UnsupportedFileError
from core.formats import load_document, parse_document
from core.formats.format_registry import (
    FormatSpec,
    all_formats,
    register,
    registered,
    resolve_format,
    supported_suffixes,
)
from core.index.indexer import collect_files
from core.ingest.request import LoadRequest
from core.ingest.text import decode_text, text_lines
from core.parse.blocks import make_block
from core.provenance.types import Block, Document


def _load_toy(req: LoadRequest) -> Document:
    """A toy format: UTF-8 text in which every line is one paragraph."""
    text = decode_text(req.data, req.name)
    if not text.strip():
        raise EmptyFileError(f"{req.name} holds no toy lines")
    return Document(
        doc_id=req.doc_id,
        sha256=req.sha256,
        source=req.source,
        kind="toy",
        text=text,
        title=req.stem,
        lines=text_lines(text),
    )


def _parse_toy(doc: Document) -> list[Block | None]:
    return [make_block(doc, "paragraph", ln.char_start, ln.char_end) for ln in doc.lines]


TOY = FormatSpec(
    name="toy", label="Toy lines", suffixes=(".toy",), load=_load_toy, parse=_parse_toy
)
TOY_TEXT = "First toy line about pumps.\nSecond toy line about valves.\n"


@pytest.fixture
def toy():
    with registered(TOY) as spec:
        yield spec


def test_builtin_formats_are_registered_once() -> None:
    names = [f.name for f in all_formats()]
    assert len(names) == len(set(names)) and {"pdf", "text", "markdown"} <= set(names)
    suffixes = supported_suffixes()
    assert len(suffixes) == len(set(suffixes)) and ".pdf" in suffixes and ".md" in suffixes
    assert sum(f.default for f in all_formats()) == 1


def test_dispatch_rules() -> None:
    assert resolve_format(b"%PDF-1.7 ...", "looks.txt").name == "pdf"  # content wins
    assert resolve_format(b"junk %PDF-1.7 ...", "looks.pdf").name == "pdf"  # header in 1 KiB
    assert resolve_format(b"notes on %PDF-1.7", "notes.txt").name == "text"  # only mentions it
    assert resolve_format(b"# Title\n", "notes.md").name == "markdown"
    assert resolve_format(b"plain", "notes.rst").name == "text"  # the default
    with pytest.raises(NotAPdfError, match="no %PDF- header"):
        resolve_format(b"hello", "fake.pdf")
    with pytest.raises(UnsupportedFileError, match="binary file"):
        resolve_format(b"\x89PNG\r\n\x1a\n....", "picture.bin")


def test_a_spec_is_checked_and_names_are_unique(toy) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register(TOY)
    clashing = FormatSpec(
        name="md2", label="x", suffixes=(".md",), load=_load_toy, parse=_parse_toy
    )
    with pytest.raises(ValueError, match="suffix .md already belongs"):
        register(clashing)
    with pytest.raises(ValueError, match="must be"):
        FormatSpec(name="bad", label="x", suffixes=("TOY",), load=_load_toy, parse=_parse_toy)


def test_toy_format_loads_parses_and_chunks(toy, tmp_path, capsys) -> None:
    path = tmp_path / "demo.toy"
    path.write_text(TOY_TEXT, encoding="utf-8")
    doc = load_document(path)
    assert doc.kind == "toy" and not doc.is_paged
    blocks = parse_document(doc).blocks
    assert [b.text for b in blocks] == [
        "First toy line about pumps.",
        "Second toy line about valves.",
    ]
    assert main(["chunk", str(path), "--policy", "structure", "--json", "--with-text"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["document"]["kind"] == "toy"
    for chunk in out["chunks"]:
        assert doc.text[chunk["char_start"] : chunk["char_end"]] == chunk["text"]


def test_toy_format_is_found_in_folders(toy, tmp_path) -> None:
    (tmp_path / "a.toy").write_text(TOY_TEXT, encoding="utf-8")
    (tmp_path / "b.unknown").write_text("not listed", encoding="utf-8")
    assert [p.name for p in collect_files([tmp_path])] == ["a.toy"]
    assert [p.name for p in expand_docs([str(tmp_path)])] == ["a.toy"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "c.unknown").write_text("not listed", encoding="utf-8")
    with pytest.raises(LabelError, match="holds no document"):
        expand_docs([str(empty)])


def test_index_and_eval_read_the_same_files_of_a_folder(tmp_path) -> None:
    """One discovery rule: nested folders are read, hidden ones (a store) are not."""
    (tmp_path / "top.txt").write_text("top", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nested.md").write_text("# nested", encoding="utf-8")
    (tmp_path / ".chunkscope").mkdir()
    (tmp_path / ".chunkscope" / "kept.txt").write_text("a store's own file", encoding="utf-8")
    names = [p.name for p in expand_docs([str(tmp_path)])]
    assert names == [p.name for p in collect_files([tmp_path])] == ["nested.md", "top.txt"]


def test_toy_format_is_accepted_by_the_library_page(toy, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    at = AppTest.from_file("../app.py", default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    uploader = at.get("file_uploader")[0]
    assert ".toy" in uploader.proto.help and "Toy lines" in uploader.proto.label  # registry-read
    at.file_uploader(key="cs_uploader").set_value(
        [("demo.toy", TOY_TEXT.encode(), "application/octet-stream")]
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    row = table[table["document"] == "demo"]
    assert list(row["kind"]) == ["Toy lines"]
