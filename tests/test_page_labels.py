"""The number a PDF page prints on itself, beside its index: from the PDF's page labels,
else from a footer or header number its neighbours agree with; a figure alone at a
table's end is not a page number, and a page printing its own index adds nothing."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from core.formats import load_document
from core.ingest.page_labels import printed_labels
from core.provenance.cite import Citation
from tests.conftest import SHARED


def _pdf(path: Path, pages: list[tuple[str, str | None]], labels: list[dict] | None = None) -> Path:
    """One page per (body, footer) pair; ``labels``: the PDF's own /PageLabels rules."""
    pdf = pymupdf.open()
    for body, footer in pages:
        page = pdf.new_page(width=612, height=792)
        page.insert_text((72, 100), body, fontsize=11)
        if footer is not None:
            page.insert_text((300, 760), footer, fontsize=9)
    if labels:
        pdf.set_page_labels(labels)
    pdf.save(path)
    return path


def test_footer_numbers_its_neighbours_agree_with_are_the_printed_labels(tmp_path):
    pages = [
        ("Annual report cover", None),
        ("Table of contents\nItem 1 Business 1", None),
        ("Revenue by segment\nTotal\n12", None),  # a figure alone, no agreeing neighbour
        *((f"Business section text on page {n}", str(n - 3)) for n in range(4, 9)),
        *((f"Exhibit text {n}", f"F-{n - 8}") for n in range(9, 12)),
    ]
    doc = load_document(_pdf(tmp_path / "report.pdf", pages))
    labels = printed_labels(doc)
    assert labels == {4: "1", 5: "2", 6: "3", 7: "4", 8: "5", 9: "F-1", 10: "F-2", 11: "F-3"}
    assert 3 not in labels  # "12" alone ends a table: no page near it agrees
    cite = Citation.of_span(doc, doc.pages[5].char_start, doc.pages[5].char_start + 8)
    assert ", p. 6 (printed 3), chars " in cite.render(labels)
    assert ", p. 6, chars " in cite.render()  # without the labels, the index alone
    across = Citation.of_span(doc, doc.pages[5].char_start, doc.pages[6].char_start + 8)
    assert ", pp. 6-7 (printed 3 to 4), chars " in across.render(labels)


def test_a_page_printing_its_own_index_adds_nothing(tmp_path):
    pages = [(f"Page body {n}", str(n)) for n in range(1, 7)]
    doc = load_document(_pdf(tmp_path / "plain.pdf", pages))
    assert printed_labels(doc) == {}
    cite = Citation.of_span(doc, doc.pages[2].char_start, doc.pages[2].char_start + 4)
    assert ", p. 3, chars " in cite.render(printed_labels(doc))


def test_a_spread_is_labelled_with_both_its_numbers(tmp_path):
    pages = [(f"Spread body {n}\n{2 * n + 18}\n{2 * n + 19}", None) for n in range(1, 7)]
    doc = load_document(_pdf(tmp_path / "spreads.pdf", pages))
    labels = printed_labels(doc)
    assert labels == {n: f"{2 * n + 18}-{2 * n + 19}" for n in range(1, 7)}


def test_a_series_written_with_spaces_is_read_as_one(tmp_path):
    pages = [(f"Appendix text {n}", f"A - {n}") for n in range(1, 5)]
    doc = load_document(_pdf(tmp_path / "appendix.pdf", pages))
    assert printed_labels(doc) == {n: f"A-{n}" for n in range(1, 5)}


def test_page_labels_that_repeat_the_indices_leave_the_footers_to_say(tmp_path):
    rules = [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}]
    pages = [(f"Body {n}", None if n < 3 else str(n - 2)) for n in range(1, 7)]
    doc = load_document(_pdf(tmp_path / "identity.pdf", pages, rules))
    assert printed_labels(doc) == {3: "1", 4: "2", 5: "3", 6: "4"}


def test_the_pdfs_own_page_labels_come_first(tmp_path):
    rules = [
        {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
        {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
    ]
    pages = [(f"Body {n}", str(n + 40)) for n in range(1, 6)]  # footers that would disagree
    doc = load_document(_pdf(tmp_path / "labelled.pdf", pages, rules))
    assert printed_labels(doc) == {1: "i", 2: "ii", 3: "1", 4: "2", 5: "3"}


def test_a_text_document_has_no_printed_pages(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("A plain text file.\n12\n", encoding="utf-8")
    assert printed_labels(load_document(path)) == {}


def test_a_filing_prints_its_page_numbers_after_its_front_matter():
    path = SHARED / "corpus" / "financebench" / "pdfs" / "Pfizer_2023Q2_10Q.pdf"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    doc = load_document(path)
    labels = printed_labels(doc)
    assert labels[49] == "45" and labels[11] == "8"
    assert len(labels) >= 50  # the body's pages, not the cover's
    # pages 3, 5 and 67 end on a number alone that no page near them agrees with
    assert not {3, 5, 67} & set(labels)


def test_labels_written_as_hex_strings_are_read_as_text():
    """A beamer talk labels each page with its frame number, written as a UTF-16 hex string
    (``<FEFF0038>``): read as "8", never shown as written."""
    from core.ingest.page_labels import decoded_label

    path = SHARED / "corpus" / "pdfs" / "beamerexample-conference-talk.pdf"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    labels = printed_labels(load_document(path))
    assert labels[12] == "8" and labels[8] == labels[9] == "7"  # overlays share a frame
    assert 7 not in labels  # its label is its index: nothing to add
    assert not any("<" in label or "\ufeff" in label for label in labels.values())
    assert decoded_label("<FEFF0041>-3") == "A-3" and decoded_label("<4142 43>") == "ABC"
    assert decoded_label("iv") == "iv"
    for kept in ("<1>", "A<b>c", "<FEFF00>", "<FEFFD800>", "<00>"):  # not text: as written
        assert decoded_label(kept) == kept
