"""Ingest: canonical text, character maps, pages, errors, on the shared corpus."""

from __future__ import annotations

import csv
import json
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.errors as errors
from core.formats import doc_id_for, document_to_dict, load_document, sha256_of
from core.ingest.reading_order import _extents, _split, reading_order
from core.ingest.text import decode_text
from core.provenance.types import Document
from tests.conftest import (
    BAD_PDFS,
    EVAL_DIR,
    PDF_DIR,
    PDF_PASSWORDS,
    SAMPLE_DOCS,
    TEXT_CORPORA,
    openable_pdfs,
    text_corpora,
)

BOX_TOLERANCE_PT = 0.5
LIGATURES = re.compile("[\ufb00-\ufb06]")


@cache
def load(path: Path) -> Document:
    return load_document(path, password=PDF_PASSWORDS.get(path.name))


def pdf(name: str) -> Document:
    return load(PDF_DIR / name)


def span_of(doc: Document, needle: str, start: int = 0) -> int:
    index = doc.text.find(needle, start)
    assert index >= 0, f"{needle!r} not in {doc.doc_id}"
    return index


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BAD_PDFS))
def test_bad_pdfs_raise_their_typed_error(name: str) -> None:
    expected = getattr(errors, BAD_PDFS[name])
    with pytest.raises(expected) as info:
        load_document(PDF_DIR / name)
    message = str(info.value)
    assert message and "\n" not in message and name in message


@pytest.mark.parametrize("name", sorted(PDF_PASSWORDS))
def test_encrypted_pdfs_need_the_right_password(name: str) -> None:
    with pytest.raises(errors.PasswordRequiredError):
        load_document(PDF_DIR / name)
    with pytest.raises(errors.WrongPasswordError):
        load_document(PDF_DIR / name, password="not-the-password")
    doc = pdf(name)
    assert doc.text.strip()
    reopened = pymupdf.open(stream=doc.pdf_bytes, filetype="pdf")
    assert not reopened.needs_pass and reopened.page_count == len(doc.pages)


def test_input_errors_for_bytes_and_paths(tmp_path: Path) -> None:
    with pytest.raises(errors.EmptyFileError):
        load_document(b"", name="empty.txt")
    with pytest.raises(errors.NotAPdfError):
        load_document(b"just some words", name="fake.pdf")
    with pytest.raises(errors.NotAPdfError):
        load_document(b"%PDF-1.7\ngarbage without objects", name="broken.pdf")
    with pytest.raises(errors.UnsupportedFileError):
        load_document(b"\x00\x01binary\xff", name="blob.bin")
    with pytest.raises(errors.UnsupportedFileError):
        load_document(b"caf\xe9 latin-1", name="latin.txt")
    with pytest.raises(errors.EmptyFileError):
        load_document(b"\xef\xbb\xbf \n\n", name="blank.md")
    with pytest.raises(errors.UnsupportedFileError):
        load_document(tmp_path / "missing.pdf")
    with pytest.raises(ValueError):
        load_document(b"text")


def test_zero_page_pdf_is_rejected() -> None:
    with pytest.raises(errors.ZeroPagesError):
        load_document(PDF_DIR / "pypdfsf_unreadablemetadata.pdf")


# --- ids and metadata -------------------------------------------------------------------


def test_doc_id_and_sha256() -> None:
    assert doc_id_for("sample-sigconf.pdf") == "sample-sigconf"
    assert doc_id_for("/a/b/My Report (v2).PDF") == "My-Report-v2-"
    assert doc_id_for("notes.tar.md") == "notes.tar"
    assert doc_id_for("ümlaut.txt") == "-mlaut"
    data = (PDF_DIR / "sample-sigconf.pdf").read_bytes()
    doc = pdf("sample-sigconf.pdf")
    assert doc.sha256 == sha256_of(data) and len(doc.sha256) == 64
    assert doc.doc_id == "sample-sigconf" and doc.kind == "pdf"
    from_bytes = load_document(data, name="sample-sigconf.pdf")
    assert from_bytes.text == doc.text and from_bytes.source == "sample-sigconf.pdf"


def test_titles() -> None:
    assert pdf("sample-sigconf.pdf").title == "The Name of the Title Is Hope"
    assert pdf("Seige_of_Vicksburg_Sample_OCR.pdf").title  # junk metadata "Binder1.pdf"
    assert pdf("Seige_of_Vicksburg_Sample_OCR.pdf").title != "Binder1.pdf"
    assert pdf("ocrmypdf_c03-29.pdf").title == "ocrmypdf_c03-29"
    assert load(TEXT_CORPORA / "wikitexts.md").title


@pytest.mark.parametrize(
    ("markdown", "title"),
    [
        ("Pump Manual\n===========\n\nIntro.\n\n## Maintenance\n", "Pump Manual"),
        ("Intro line.\n\nPump\nManual\n---\n\n# Later\n", "Pump Manual"),
        ("# Pump Manual\n\nSub\n===\n", "Pump Manual"),
        ("Just text.\n\n---\n\nMore text.\n", "Just text."),  # a rule, not a heading
    ],
)
def test_markdown_title_is_the_first_heading_of_either_style(markdown: str, title: str) -> None:
    assert load_document(markdown.encode(), name="manual.md").title == title


def test_outline_has_levels_pages_and_positions() -> None:
    doc = pdf("pypdfsf_pdflatex-outline.pdf")
    assert doc.outline and all(e.level >= 1 for e in doc.outline)
    assert all(1 <= e.page <= len(doc.pages) for e in doc.outline)
    first = doc.outline[0]
    assert first.y_pt is not None and 0 <= first.y_pt <= doc.pages[first.page - 1].height_pt


def test_document_to_dict_shape() -> None:
    doc = pdf("pypdfsf_multicolumn.pdf")
    data = document_to_dict(doc)
    assert set(data) == {"doc_id", "sha256", "source", "kind", "pages"}
    assert set(data["pages"][0]) == {
        "number",
        "char_start",
        "char_end",
        "width_pt",
        "height_pt",
        "has_text",
    }
    assert document_to_dict(doc, with_text=True)["text"] == doc.text
    json.dumps(data)


# --- PDF invariants ---------------------------------------------------------------------


@pytest.mark.parametrize("path", openable_pdfs(), ids=lambda p: p.name)
def test_pdf_maps_and_pages(path: Path) -> None:
    doc = load(path)
    n = len(doc.text)
    assert doc.char_page is not None and doc.char_bbox_pt is not None
    assert doc.char_page.shape == (n,) and doc.char_bbox_pt.shape == (n, 4)
    inserted = doc.char_page == 0
    assert np.isnan(doc.char_bbox_pt[inserted]).all()
    assert all(doc.text[i].isspace() for i in np.flatnonzero(inserted))
    real = ~inserted
    assert np.isfinite(doc.char_bbox_pt[real]).all()
    assert doc.char_page[real].max(initial=1) <= len(doc.pages)
    # pages tile the text in order, and each page's characters map to it
    assert doc.pages[0].char_start == 0 and doc.pages[-1].char_end == n
    for before, after in zip(doc.pages, doc.pages[1:], strict=False):
        assert before.char_end == after.char_start
    for page in doc.pages:
        assert page.number == doc.pages.index(page) + 1
        on_page = doc.char_page[page.char_start : page.char_end]
        assert set(np.unique(on_page)) <= {0, page.number}
        assert page.has_text == bool((on_page == page.number).any())
        boxes = doc.char_bbox_pt[page.char_start : page.char_end][on_page == page.number]
        t = BOX_TOLERANCE_PT
        assert (boxes[:, 0] >= -t).all() and (boxes[:, 1] >= -t).all()
        assert (boxes[:, 2] <= page.width_pt + t).all()
        assert (boxes[:, 3] <= page.height_pt + t).all()
        assert (boxes[:, 2] >= boxes[:, 0]).all() and (boxes[:, 3] >= boxes[:, 1]).all()


@pytest.mark.parametrize("path", openable_pdfs(), ids=lambda p: p.name)
def test_pdf_text_rules(path: Path) -> None:
    doc = load(path)
    assert not LIGATURES.search(doc.text)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", doc.text)
    assert "\n\n\n" not in doc.text and not doc.text[:1].isspace()
    assert not doc.text[-1:].isspace()
    for line in doc.lines:
        text = doc.text[line.char_start : line.char_end]
        assert text and text == text.strip() and "\n" not in text and "  " not in text
        page = doc.pages[line.page - 1]
        assert page.char_start <= line.char_start <= line.char_end <= page.char_end
        assert line.bbox_pt is not None
    starts = [line.char_start for line in doc.lines]
    assert starts == sorted(starts)


def test_text_less_pages_are_flagged() -> None:
    for name in ("ocrmypdf_c03-29.pdf", "pypdfsf_imagemagick-CCITTFaxDecode.pdf"):
        doc = load_document(PDF_DIR / name, ocr="never")  # scans read by OCR: test_ocr.py
        assert doc.pages_without_text == (1,) and doc.text == ""
    ocr = pdf("Seige_of_Vicksburg_Sample_OCR.pdf")
    assert ocr.pages_without_text == () and len(ocr.text) > 5000


def test_ligatures_expand_into_letters_with_split_boxes() -> None:
    source = pymupdf.open(PDF_DIR / "elstest-5p.pdf")
    raw = source[0].get_text("rawdict", flags=pymupdf.TEXT_PRESERVE_LIGATURES)
    glyph = next(
        ch
        for block in raw["blocks"]
        for line in block.get("lines", ())
        for span in line["spans"]
        for ch in span["chars"]
        if LIGATURES.match(ch["c"])
    )
    doc = pdf("elstest-5p.pdf")
    x0, y0, x1, y1 = glyph["bbox"]
    boxes = doc.char_bbox_pt
    inside = np.flatnonzero(
        (doc.char_page == 1)
        & (boxes[:, 0] >= x0 - 0.01)
        & (boxes[:, 2] <= x1 + 0.01)
        & np.isclose(boxes[:, 1], y0, atol=0.01)
    )
    import unicodedata

    expansion = unicodedata.normalize("NFKC", glyph["c"])
    assert "".join(doc.text[i] for i in inside) == expansion
    assert list(inside) == list(range(inside[0], inside[0] + len(expansion)))
    widths = boxes[inside, 2] - boxes[inside, 0]
    assert np.allclose(widths, (x1 - x0) / len(expansion), atol=0.01)


def test_line_end_hyphens_are_joined() -> None:
    doc = pdf("sample-sigconf.pdf")
    assert "conference proceedings or journal" in doc.text.replace("\n", " ")
    assert "proceed-" not in doc.text


def test_two_columns_read_column_by_column() -> None:
    doc = pdf("sample-sigconf.pdf")
    # page 2: left column holds sections 2 and 3, the right one 4 and 5
    assert span_of(doc, "2.2 Template Parameters") < span_of(doc, "3 MODIFICATIONS")
    assert span_of(doc, "3 MODIFICATIONS") < span_of(doc, "4 TYPEFACES")
    assert span_of(doc, "ABSTRACT") < span_of(doc, "KEYWORDS")
    els = pdf("elstest-5p.pdf")
    left = span_of(els, "The photon part of the polariton trapped")
    assert left < span_of(els, "by dielectric mismatch on the PMS surface")


def test_three_columns_of_the_federal_register() -> None:
    doc = pdf("plumber_federal-register-2020-17221.pdf")
    first = span_of(doc, "Hatta International Airport")
    second = span_of(doc, "altitude disagree alert")
    third = span_of(doc, "and the Ethiopian Civil Aviation")
    assert first < second < third
    assert doc.char_page[first] == doc.char_page[second] == doc.char_page[third] == 2


def test_multicolumn_latex_sample() -> None:
    doc = pdf("pypdfsf_multicolumn.pdf")
    page = doc.pages[0]
    lines = [ln for ln in doc.lines if ln.page == 1 and ln.bbox_pt is not None]
    middle = page.width_pt / 2
    left = [ln.char_start for ln in lines if ln.bbox_pt[2] < middle]
    right = [ln.char_start for ln in lines if ln.bbox_pt[0] > middle]
    assert left and right and max(left) < min(right)


def test_rotated_pages_map_to_rendered_pixels() -> None:
    doc = pdf("pypdfsf_habibi-rotated.pdf")
    source = pymupdf.open(PDF_DIR / "pypdfsf_habibi-rotated.pdf")
    assert [p.rotation_deg for p in doc.pages] == [90, 180, 270, 0]
    for page in doc.pages:
        rendered = source[page.number - 1].get_pixmap()
        assert abs(rendered.width - page.width_pt) <= 1
        assert abs(rendered.height - page.height_pt) <= 1
        image = np.frombuffer(rendered.samples, dtype=np.uint8).reshape(
            rendered.height, rendered.width, rendered.n
        )
        hits = total = 0
        for i in range(page.char_start, page.char_end):
            x0, y0, x1, y1 = doc.char_bbox_pt[i]
            if doc.char_page[i] == 0 or (x1 - x0) * (y1 - y0) < 4:
                continue
            crop = image[int(y0) : math.ceil(y1), int(x0) : math.ceil(x1)]
            total += 1
            hits += bool((crop < 128).any())
        assert total and hits >= 0.8 * total


_SPANS = st.lists(
    st.tuples(st.integers(0, 600), st.integers(1, 120)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(_SPANS, _SPANS, st.sampled_from([0.0, 4.5, 12.0]))
def test_column_extents_of_a_union_come_from_the_parts_extents(a, b, gap) -> None:
    """Column counting of a growing group of bands reads the parts' extents, not the
    boxes again: the extents of two sets' parts give the parts of their union, which are
    ``_split``'s parts."""
    boxes = [(x0, 0.0, x1, 10.0) for x0, x1 in a + b]
    parts = _split(boxes, list(range(len(boxes))), axis=0, min_gap=gap) if boxes else []
    whole = [(min(boxes[i][0] for i in p), max(boxes[i][2] for i in p)) for p in parts]
    assert _extents(a + b, gap) == whole
    assert _extents(_extents(a, gap) + _extents(b, gap), gap) == whole


def test_reading_order_bands_and_columns() -> None:
    title = (50, 50, 550, 70)
    left = [(50, 100 + 20 * i, 290, 115 + 20 * i) for i in range(3)]
    right = [(310, 100 + 20 * i, 550, 115 + 20 * i) for i in range(3)]
    figure = (50, 200, 550, 260)
    below_left, below_right = (50, 280, 290, 300), (310, 280, 550, 300)
    boxes = [
        right[0],
        left[2],
        title,
        below_right,
        left[0],
        figure,
        right[2],
        left[1],
        right[1],
        below_left,
    ]
    order = [boxes[i] for i in reading_order(boxes)]
    assert order == [title, *left, *right, figure, below_left, below_right]
    assert reading_order([]) == [] and reading_order([title]) == [0]


def test_a_centred_title_is_read_before_the_author_columns_it_overhangs() -> None:
    """The sigconf title (x 189-422) leaves a sliver of gutter left of it but crosses the
    gutter between the second and third author columns: it is a band of its own."""
    title = (189, 84, 422, 100)
    authors = [(110, 109, 174, 136), (264, 111, 348, 134), (420, 111, 522, 134)]
    below = [(110, 138, 174, 160), (264, 136, 348, 158), (426, 136, 515, 146)]
    boxes = [authors[0], below[2], title, authors[2], below[0], authors[1], below[1]]
    order = [boxes[i] for i in reading_order(boxes)]
    assert order == [title, authors[0], below[0], authors[1], below[1], authors[2], below[2]]
    # a heading sitting inside the left column still joins its columns
    heading = (110, 84, 170, 100)
    boxes = [heading, *authors, *below]
    assert [boxes[i] for i in reading_order(boxes)][:3] == [heading, authors[0], below[0]]
    doc = load(SAMPLE_DOCS / "sample-sigconf.pdf")
    assert doc.text.startswith("The Name of the Title Is Hope\n\nBen Trovato")


# --- text documents ---------------------------------------------------------------------


@pytest.mark.parametrize("path", text_corpora(), ids=lambda p: p.name)
def test_text_corpora_read_like_python(path: Path) -> None:
    doc = load(path)
    assert doc.kind == "markdown" and doc.pages == ()
    assert doc.char_page is None and doc.char_bbox_pt is None
    assert doc.text == path.read_text(encoding="utf-8")
    assert doc.lines[0].char_start == 0 and doc.lines[-1].char_end == len(doc.text)
    for line in doc.lines:
        assert "\n" not in doc.text[line.char_start : line.char_end]


def test_evaluation_spans_index_the_canonical_text() -> None:
    with (EVAL_DIR / "questions_df.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    checked = 0
    for row in rows:
        doc = load(TEXT_CORPORA / f"{row['corpus_id']}.md")
        for ref in json.loads(row["references"]):
            assert doc.text[ref["start_index"] : ref["end_index"]] == ref["content"]
            checked += 1
    assert checked == 790


def test_text_newlines_bom_and_kinds() -> None:
    doc = load_document("\ufeffTitle\r\nline two\rline three\n".encode(), name="notes.txt")
    assert doc.text == "Title\nline two\nline three\n"
    assert doc.kind == "text" and doc.title == "Title"
    assert [doc.text[ln.char_start : ln.char_end] for ln in doc.lines] == [
        "Title",
        "line two",
        "line three",
        "",
    ]
    md = load_document(b"intro\n\n# Heading One\n", name="README.markdown")
    assert md.kind == "markdown" and md.title == "Heading One"


_TEXT_ALPHABET = st.sampled_from(
    list("ab Z9.,-\t")
    + ["\r\n", "\r", "\n", "\n\n", "שלום", "مرحبا", "e\u0301", "👩‍👩‍👧", "\u200f"]
)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(_TEXT_ALPHABET, min_size=1, max_size=40), bom=st.booleans())
def test_text_ingest_matches_python_decoding(parts: list[str], bom: bool) -> None:
    raw = "".join(parts)
    data = ("\ufeff" if bom else "").encode() + raw.encode("utf-8")
    if not raw.strip():
        with pytest.raises(errors.EmptyFileError):
            load_document(data, name="sample.txt")
        return
    doc = load_document(data, name="sample.txt")
    expected = raw.replace("\r\n", "\n").replace("\r", "\n")
    assert doc.text == expected == decode_text(data, "sample.txt")
    assert "\n".join(doc.text[ln.char_start : ln.char_end] for ln in doc.lines) == doc.text


@pytest.mark.parametrize("path", openable_pdfs(), ids=lambda p: p.name)
def test_outline_matches_the_full_toc(path: Path) -> None:
    from core.ingest.pdf_outline import _slow_entries, outline_entries

    data = path.read_bytes()
    with (
        pymupdf.open(stream=data, filetype="pdf") as fast,
        pymupdf.open(stream=data, filetype="pdf") as slow,
    ):
        if fast.needs_pass:
            fast.authenticate(PDF_PASSWORDS[path.name])
            slow.authenticate(PDF_PASSWORDS[path.name])
        assert outline_entries(fast) == _slow_entries(slow)


def _raw_line(text: str, x0: float = 10.0) -> dict:
    chars = [{"c": c, "bbox": (x0 + 5 * i, 20.0, x0 + 5 * i + 4, 30.0)} for i, c in enumerate(text)]
    span = {"chars": chars, "font": "Body", "size": 10.0, "flags": 0}
    bbox = (x0, 20.0, x0 + 5 * len(text), 30.0)
    return {"spans": [span], "bbox": bbox, "dir": (1.0, 0.0)}


@pytest.mark.parametrize(
    "text",
    [
        "plain words",
        " lead",
        "trail  ",
        "  both ends ",
        "in  side",
        "a\u00a0b",
        "   ",
        "x",
        "\ufb01n",
    ],
)
def test_clean_line_fast_path_matches_the_character_rules(text: str) -> None:
    from core.ingest.pdf_lines import _clean_chars, clean_line, raw_line_parts
    from core.provenance.geometry import bounding

    parts = raw_line_parts(_raw_line(text))
    assert parts is not None
    line = clean_line(parts, pymupdf.Rect(0, 0, 600, 800))
    expected_text, expected_boxes = _clean_chars(parts[0], parts[1], None)
    if not expected_text:
        assert line is None
        return
    assert line is not None
    assert (line.text, line.boxes) == (expected_text, expected_boxes)
    if expected_text != text:
        assert line.bbox == bounding(expected_boxes)
