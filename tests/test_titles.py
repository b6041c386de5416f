"""Chunk titles (``core.render.titles``) on real filings: the nearest real heading, never a
table's column heading or unit line, the chunk's own first words, and which of a
heading's chunks it is, so no two chunks of a filing share a title."""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import pytest
from conftest import CORPUS, need_corpus

from core.chunk import chunk_document
from core.formats import load_document, parse_document
from core.provenance.types import Block, ChunkPolicy
from core.render.titles import (
    ChunkTitle,
    HeadingIndex,
    chunk_titles,
    is_real_heading,
    title_lines,
)

FILINGS = CORPUS / "financebench" / "pdfs"
TEN_Q = FILINGS / "Pfizer_2023Q2_10Q.pdf"
PEPSICO = FILINGS / "PEPSICO_2023Q1_EARNINGS.pdf"
POLICIES = (
    ChunkPolicy(name="structure", size=240, overlap=24, unit="tokens"),
    ChunkPolicy(name="fixed", size=800, overlap=100, unit="chars"),
)
PERIOD = re.compile(r"\b(months|weeks) ended\b|^\(", re.IGNORECASE)


@functools.cache
def filing(path):
    doc = load_document(need_corpus(path))
    return doc, parse_document(doc).blocks


@pytest.mark.parametrize(
    "text",
    [
        "Six Months Ended December 31, ($ in millions, except per share data)",
        "Three Months Ended",
        "(in millions, unaudited)",
        "(UNAUDITED)",
        "First-Quarter",
        "Fiscal Year Ended June 30,",
        "",
    ],
)
def test_column_headings_and_unit_lines_are_not_titles(text):
    assert not is_real_heading(text)


@pytest.mark.parametrize(
    "text", ["Liquidity", "Note 7. Financial Instruments", "First-Quarter 2023 Results"]
)
def test_section_headings_are_titles(text):
    assert is_real_heading(text)


def test_a_heading_that_is_a_tables_header_row_is_not_a_title():
    assert not is_real_heading("Net  Revenue\tGrowth", ["net revenue growth"])


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.key)
def test_every_chunk_of_the_10q_has_its_own_title(policy):
    doc, blocks = filing(TEN_Q)
    chunks = chunk_document(doc, blocks, policy)
    titles = chunk_titles(chunks, HeadingIndex.of(doc.text, blocks))
    assert set(titles) == {c.chunk_id for c in chunks}
    labels = [t.label for t in titles.values()]
    assert len(set(labels)) == len(labels)  # chunks that share a heading read apart
    rows = [span for blk in blocks if blk.kind == "table" for span in blk.header_rows]
    header_rows = {" ".join(doc.text[a:b].split()) for a, b in rows}
    assert header_rows  # the filing's statements carry column headings
    for title in titles.values():
        assert title.heading not in header_rows and not PERIOD.search(title.heading)
        assert title.words and "\n" not in title.label
    by_heading: dict[str, list[ChunkTitle]] = {}
    for chunk in sorted(chunks, key=lambda c: c.char_start):
        by_heading.setdefault(titles[chunk.chunk_id].heading, []).append(titles[chunk.chunk_id])
    for shared in by_heading.values():  # "(2 of 5)": in document order, each once
        assert [t.ordinal for t in shared] == list(range(1, len(shared) + 1))
        assert {t.count for t in shared} == {len(shared)}


def test_a_chunk_opening_a_statement_is_titled_by_its_own_rows():
    doc, blocks = filing(TEN_Q)
    chunks = chunk_document(doc, blocks, POLICIES[0])
    titles = chunk_titles(chunks, HeadingIndex.of(doc.text, blocks))

    def first_row(block):
        return " ".join(doc.text[slice(*block.header_rows[0])].split())

    # The first statement: its column heading is the one every statement repeats.
    statements = [b for b in blocks if b.kind == "table" and b.header_rows]
    table = next(b for b in statements if first_row(b).startswith("Three Months Ended"))
    opening = [c for c in chunks if c.char_start <= table.header_rows[0][0] < c.char_end]
    (title,) = [titles[c.chunk_id] for c in opening]
    assert title.heading == "ITEM 1. FINANCIAL STATEMENTS"  # not "PART I", which precedes it
    assert not title.words.startswith("Three Months Ended")
    assert title.label.startswith("ITEM 1. FINANCIAL STATEMENTS — “")


def test_a_unit_line_typed_as_heading_gives_way_to_the_statements_heading():
    doc, blocks = filing(PEPSICO)
    chunks = chunk_document(doc, blocks, POLICIES[0])
    titles = chunk_titles(chunks, HeadingIndex.of(doc.text, blocks))
    under_units = [c for c in chunks if c.heading_path == ("(in millions, unaudited)",)]
    assert under_units  # the parser typed the unit line as a heading
    assert {titles[c.chunk_id].heading for c in under_units} == {
        "Condensed Consolidated Statement of Cash Flows",
        "Condensed Consolidated Statement of Cash Flows (continued)",
    }


def _block(doc_text: str, kind: str, start: int, end: int, **extra) -> Block:
    return Block(
        doc_id="d", doc_sha256="0" * 64, kind=kind, char_start=start, char_end=end,
        text=doc_text[start:end], page=0, bbox_pt=None, **extra,
    )  # fmt: skip


def test_the_label_reads_heading_words_and_place():
    text = "Liquidity\n\nCash and cash equivalents were $4.1 billion at the end of the quarter."
    blocks = [_block(text, "heading", 0, 9, level=1), _block(text, "paragraph", 11, len(text))]

    class Piece:
        def __init__(self, chunk_id, a, b):
            self.chunk_id, self.char_start, self.char_end, self.text = chunk_id, a, b, text[a:b]

    cut = text.index("were")
    pieces = [Piece("a", 0, cut), Piece("b", cut, len(text))]
    titles = chunk_titles(pieces, HeadingIndex.of(text, blocks), n_words=4)
    assert titles["a"].label == "Liquidity — “Cash and cash equivalents” (1 of 2)"
    assert titles["b"].label == "Liquidity — “were $4.1 billion at …” (2 of 2)"
    alone = chunk_titles(pieces[:1], HeadingIndex.of(text, blocks), n_words=4)
    assert alone["a"].label == "Liquidity — “Cash and cash equivalents”"
    assert chunk_titles(pieces[:1], HeadingIndex.of(text, []))["a"].heading == ""


JNJ = FILINGS / "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf"
# Shipped with the tests (tests/data/filings/README.md): its section headings sit at the
# top of their pages, where the parser types them as running headers.
AMCOR = Path(__file__).parent / "data" / "filings" / "AMCOR_2023Q2_10Q.pdf"
MGM = FILINGS / "MGMRESORTS_2022Q4_EARNINGS.pdf"
FIXED = POLICIES[1]


def _titles_on(path, page):
    """The headings of the fixed-800 chunks that start on ``page`` of a filing."""
    doc, blocks = filing(path)
    chunks = chunk_document(doc, blocks, FIXED)
    titles = chunk_titles(chunks, HeadingIndex.of(doc.text, blocks))
    return {titles[c.chunk_id].heading for c in chunks if c.pages and c.pages[0] == page}


@pytest.mark.parametrize(
    ("path", "page", "heading"),
    [
        # a statement's title the parser left a paragraph governs its page, not the last
        # section heading pages before it ("ITEM 1. FINANCIAL STATEMENTS", "MedTech", ...)
        (TEN_Q, 10, "CONDENSED CONSOLIDATED BALANCE SHEETS"),
        (TEN_Q, 11, "CONDENSED CONSOLIDATED STATEMENTS OF EQUITY"),
        (TEN_Q, 12, "CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS"),
        (JNJ, 10, "Condensed Consolidated Statement of Earnings"),
        (JNJ, 12, "Reconciliation of Non-GAAP Financial Measures"),
        (MGM, 12, "CONSOLIDATED BALANCE SHEETS"),
        # a typed heading keeps governing: Note 7 runs on over its pages
        (TEN_Q, 23, "Note 7. Financial Instruments"),
        # a page-top note heading typed as a header (once in the filing: not furniture)
        # governs its table, not an earlier note's "Disposals"
        (AMCOR, 15, "Note 6 - Restructuring"),
        # an exhibit's caption governs its certification, not a guarantor table's heading
        (AMCOR, 56, "EXHIBIT 31.2 RULE 13a-14(a)/15d-14(a) CERTIFICATION OF CFO"),
        (AMCOR, 57, "EXHIBIT 32 SECTION 1350 CERTIFICATIONS OF CEO AND CFO"),
    ],
)
def test_the_title_names_the_heading_a_reader_sees_above_the_chunk(path, page, heading):
    assert _titles_on(path, page) == {heading}


def test_title_lines_leave_out_unit_lines_periods_rows_and_the_company_line():
    lines = [
        "ACME INC. AND SUBSIDIARIES\nCONDENSED CONSOLIDATED BALANCE SHEETS",
        "Dollars in Millions",
        "TWELVE MONTHS",
        "(MILLIONS) Revenue % Change",
        "2022\nEPS Numerator––Basic",
        "The company recorded charges in the quarter.",
        "Quarter to Date",
        "PHARMACEUTICAL SEGMENT (2,3) 2022 2021 Reported",
    ]
    text = "\n\n".join(lines)
    blocks, at = [], 0
    for page, line in enumerate(lines, start=1):
        blocks.append(_block(text, "paragraph", at, at + len(line)))
        blocks[-1] = Block(**{**_fields(blocks[-1]), "page": page})
        at += len(line) + 2
    found = title_lines(blocks)
    assert [b.heading_path for b in found] == [("CONDENSED CONSOLIDATED BALANCE SHEETS",)]
    (title,) = found
    assert title.char_start == 0 and text[: title.char_end] == title.text == lines[0]
    assert title.kind == "heading" and title.level == 1
    index = HeadingIndex.of(text, blocks)
    assert index.titles == ("CONDENSED CONSOLIDATED BALANCE SHEETS",)


def _fields(block):
    return {f: getattr(block, f) for f in block.__dataclass_fields__}


def test_labels_set_apart_in_columns_are_a_heading_row_not_a_title():
    assert not is_real_heading("Name of Guarantor\tJurisdiction of Incorporation")
    assert not is_real_heading("Standard    Effective Date    Effect")
    assert is_real_heading("Name of Guarantor")


# Read on the rendered pages of the Amcor 10-Q: the heading a reader sees above the first
# words of each of 10 chunks (fixed 800/100 characters) drawn with seed 28, by the page
# the chunk starts on.
AMCOR_SAMPLE = {
    10: "Note 1 - Nature of Operations and Basis of Presentation",
    12: "Note 3 - Restructuring and Other Related Activities, Net",  # page-top, header-typed
    16: "Other Intangible Assets, Net",  # under Note 7's heading, its second sub-heading
    18: "Assets and Liabilities Measured and Recorded at Fair Value on a Nonrecurring Basis",
    20: "Interest Rate Risk",
    35: "Highly Inflationary Accounting",
    39: "Consolidated Results of Operations",  # below the page-top "Results of Operations"
    44: "Supplemental Guarantor Information",  # page-top, header-typed
    48: "Dividend Payments",
    53: "SIGNATURES",  # one word in capitals at the top of the page
}


def test_sampled_chunks_of_a_fetched_filing_carry_the_heading_a_reader_sees_above_them():
    doc, blocks = filing(AMCOR)
    chunks = chunk_document(doc, blocks, FIXED)
    titles = chunk_titles(chunks, HeadingIndex.of(doc.text, blocks))
    picked = [chunks[i] for i in sorted(random.Random(28).sample(range(len(chunks)), 10))]
    assert {c.pages[0]: titles[c.chunk_id].heading for c in picked} == AMCOR_SAMPLE


def test_a_header_standing_once_is_a_heading_and_a_running_header_is_not():
    lines = ["ACME PLC", "Note 3 - Restructuring", "Charges were small.", "ACME PLC",
             "Overview", "Sales rose."]  # fmt: skip
    kinds = ["header", "header", "paragraph", "header", "header", "paragraph"]
    text = "\n\n".join(lines)
    blocks, at = [], 0
    for page, (line, kind) in enumerate(zip(lines, kinds, strict=True), start=1):
        blocks.append(Block(**{**_fields(_block(text, kind, at, at + len(line))),
                               "page": (page + 1) // 3 + 1}))  # fmt: skip
        at += len(line) + 2
    found = [b.heading_path for b in title_lines(blocks)]
    assert found == [("Note 3 - Restructuring",), ("Overview",)]  # not the repeated "ACME PLC"
