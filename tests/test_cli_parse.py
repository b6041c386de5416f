"""``chunkscope parse``: JSON contract, readable table, and user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from tests.conftest import PDF_DIR

BLOCK_KEYS = {
    "kind",
    "level",
    "char_start",
    "char_end",
    "page",
    "bbox",
    "heading_path",
    "header_rows",
    "text",
}
PAGE_KEYS = {"number", "char_start", "char_end", "width_pt", "height_pt", "has_text"}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["parse", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_for_a_pdf(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, str(PDF_DIR / "pypdfsf_pdflatex-outline.pdf"))
    assert set(data) == {"document", "blocks"}
    document = data["document"]
    assert set(document) == {"doc_id", "sha256", "source", "kind", "pages"}
    assert document["doc_id"] == "pypdfsf_pdflatex-outline" and document["kind"] == "pdf"
    assert all(set(page) == PAGE_KEYS for page in document["pages"])
    assert len(document["pages"]) == 4
    blocks = data["blocks"]
    assert blocks and all(set(block) == BLOCK_KEYS for block in blocks)
    heading = next(b for b in blocks if b["text"] == "1 Foo")
    assert heading["kind"] == "heading" and heading["level"] == 1 and heading["page"] == 2
    assert heading["heading_path"] == ["1 Foo"] and len(heading["bbox"]) == 4


def test_json_with_text_slices_match(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, str(PDF_DIR / "sample-sigconf.pdf"), "--with-text")
    text = data["document"]["text"]
    for block in data["blocks"]:
        assert text[block["char_start"] : block["char_end"]] == block["text"]


def test_json_for_markdown_has_no_pages(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(b"# Notes\r\n\r\nSome text.\r\n")
    data = run_json(capsys, str(path), "--parser", "layout", "--with-text")
    assert data["document"]["kind"] == "markdown" and data["document"]["pages"] == []
    assert data["document"]["text"] == "# Notes\n\nSome text.\n"
    assert [(b["kind"], b["page"], b["bbox"]) for b in data["blocks"]] == [
        ("heading", None, None),
        ("paragraph", None, None),
    ]


def test_table_output_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(PDF_DIR / "ocrmypdf_c03-29.pdf"), "--ocr", "never"]) == 0
    out = capsys.readouterr().out
    assert "pages without text: 1" in out and "1 pages" in out
    assert main(["parse", str(PDF_DIR / "pypdfsf_multicolumn.pdf")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["kind", "lvl", "page", "span"]
    assert any(line.startswith("heading") for line in lines)
    assert "pages without text: none" in lines[-1] and "parse (fast)" in lines[-1]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([str(PDF_DIR / "plumber_empty.pdf")], "empty"),
        ([str(PDF_DIR / "ocrmypdf_invalid.pdf")], "not a readable PDF"),
        ([str(PDF_DIR / "crazyones-encrypted-256.pdf")], "--password"),
        ([str(PDF_DIR / "crazyones-encrypted-256.pdf"), "--password", "nope"], "wrong"),
        (["/no/such/file.pdf"], "does not exist"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main(["parse", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_password_opens_encrypted_file(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys, str(PDF_DIR / "pypdfsf_lo-writer-password.pdf"), "--password", "openpassword"
    )
    assert data["blocks"] and data["document"]["pages"][0]["has_text"] is True
