"""Word .docx: styles to typed blocks, exact offsets under every policy, one-line errors.
The documents are written here with python-docx."""

from __future__ import annotations

import functools
import io
import zipfile
from pathlib import Path

import docx
import pytest
from conftest import ROOT
from test_chunk import assert_chunk_invariants
from test_chunk_corpus import POLICIES

from core.chunk import chunk_document
from core.errors import ChunkscopeError, EmptyFileError, UnsupportedFileError
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.types import Block, ChunkPolicy, Document

SENTENCES = (
    "The pump must be primed before its first start. Air in the casing damages the seal. "
    "However, a self-priming unit needs no manual priming. "
)


def manual_bytes() -> bytes:
    d = docx.Document()
    d.add_heading("Pump P-200: operating manual", level=0)
    d.add_paragraph("An invented pump, described for the Chunkscope tests.")
    d.add_heading("1 Safety", level=1)
    d.add_paragraph("Disconnect power before opening the housing.", style="List Bullet")
    d.add_paragraph("Wear gloves: the casing can be hot.", style="List Bullet")
    d.add_heading("1.1 Before the first start", level=2)
    for _ in range(12):
        d.add_paragraph(SENTENCES * 3)
    table = d.add_table(rows=3, cols=3)
    rows = [("Quantity", "Min", "Max"), ("Flow (m\u00b3/h)", "5", "120"), ("Head (m)", "8", "64")]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(2, 1).merge(table.cell(2, 2))
    d.add_paragraph("Table 1: limits", style="Caption")
    p = d.add_paragraph("Limits drop at altitude.\tSee section 3.")
    p.add_run().add_break()
    p.add_run("A line after a break, with \u05e9\u05dc\u05d5\u05dd and e\u0301 and \U0001f680.")
    d.add_paragraph("First step.", style="List Number")
    d.add_paragraph("Second step.", style="List Number")
    d.add_paragraph("   ")  # empty paragraphs are dropped
    buffer = io.BytesIO()
    d.save(buffer)
    return buffer.getvalue()


THIRD_PARTY = sorted((ROOT / "tests" / "data" / "formats" / "third_party").glob("*.docx"))


@functools.cache
def parsed(path: Path | None = None) -> tuple[Document, tuple[Block, ...]]:
    doc = load_document(path) if path else load_document(manual_bytes(), name="manual.docx")
    return doc, parse_document(doc).blocks


def test_styles_become_typed_blocks() -> None:
    doc, blocks = parsed()
    assert doc.kind == "docx" and not doc.is_paged and doc.title == "Pump P-200: operating manual"
    headings = [(b.level, b.text) for b in blocks if b.kind == "heading"]
    assert headings == [
        (1, "Pump P-200: operating manual"),
        (2, "1 Safety"),
        (3, "1.1 Before the first start"),
    ]
    lists = [b.text for b in blocks if b.kind == "list"]
    assert lists == [
        "Disconnect power before opening the housing.\nWear gloves: the casing can be hot.",
        "First step.\nSecond step.",
    ]
    table = next(b for b in blocks if b.kind == "table")
    assert (
        table.text == "Quantity\tMin\tMax\nFlow (m\u00b3/h)\t5\t120\nHead (m)\t8 64"
    )  # merged: once
    assert table.heading_path[-1] == "1.1 Before the first start"
    assert any(b.kind == "caption" and b.text == "Table 1: limits" for b in blocks)
    assert "altitude.\tSee section 3.\nA line after a break" in doc.text


def test_third_party_documents_read_as_written() -> None:
    assert len(THIRD_PARTY) == 4
    known = parsed(THIRD_PARTY[2])  # par-known-paragraphs: a Heading 1 and a Normal paragraph
    assert [(b.kind, b.level, b.text) for b in known[1]][:2] == [
        ("heading", 1, "Heading Paragraph"),
        ("paragraph", 0, "Normal paragraph"),
    ]
    numbered = parsed(THIRD_PARTY[0])[1]
    assert [b.kind for b in numbered] == ["list"]
    inner = parsed(THIRD_PARTY[3])[1]  # paragraphs and tables in body order
    assert [b.text for b in inner][:4] == ["P1", "T2", "P3", "T4"]
    assert [b.kind for b in inner][:4] == ["paragraph", "table", "paragraph", "table"]
    links = parsed(THIRD_PARTY[1])[0]
    assert "Three with link to https://foo.com." in links.text  # hyperlink text is read


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.key)
@pytest.mark.parametrize("path", [None, *THIRD_PARTY], ids=lambda p: p.name if p else "manual")
def test_every_policy_keeps_exact_offsets(path: Path | None, policy: ChunkPolicy) -> None:
    doc, blocks = parsed(path)
    tokenizer = load_tokenizer()
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    for block in blocks:
        assert doc.text[block.char_start : block.char_end] == block.text


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 old binary .doc", UnsupportedFileError, "not a ZIP"),
        (_zip({"hello.txt": b"hi"}), UnsupportedFileError, "not a readable Word document"),
        (manual_bytes()[:2000], UnsupportedFileError, "Word document"),
        (
            _zip({"[Content_Types].xml": b"<Types", "word/document.xml": b"<broken"}),
            UnsupportedFileError,
            "Word document",
        ),
    ],
)
def test_bad_docx_fails_in_one_line(data: bytes, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        load_document(data, name="bad.docx")
    assert "\n" not in str(caught.value) and isinstance(caught.value, ChunkscopeError)


def test_an_empty_docx_says_so() -> None:
    buffer = io.BytesIO()
    docx.Document().save(buffer)
    with pytest.raises(EmptyFileError, match="holds no text"):
        load_document(buffer.getvalue(), name="empty.docx")


def test_a_zip_bomb_is_refused_before_it_is_read() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", b"<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * 2**24
            for _ in range(33):  # 528 MiB of zeros, about 0.5 MiB compressed
                member.write(block)
    with pytest.raises(UnsupportedFileError, match="ZIP bomb"):
        load_document(buffer.getvalue(), name="bomb.docx")
