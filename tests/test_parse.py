"""Parse: typed blocks over every corpus file, and block typing on real documents."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pymupdf
import pytest

from core.errors import ChunkscopeError
from core.formats import PARSERS, ParseResult, load_document, parse_document
from core.parse.headings import key
from core.provenance.types import BLOCK_KINDS, Document
from tests.conftest import PDF_DIR, SAMPLE_DOCS, openable_pdfs, text_corpora
from tests.test_ingest import load  # one cache of loaded documents for both modules

SAMPLE_MARKDOWN = """\
Intro paragraph
spans two lines.

# Title

Setext Heading
--------------

- item one
  continued
- item two

- item three after a blank

1. first
2) second

```python
def f():

    return 1
```

    indented code
    more code

| a | b |
|---|:-:|
| 1 | 2 |

> a quote

### Deep ###
Closing words.
"""


@cache
def parsed(path: Path) -> ParseResult:
    return parse_document(load(path))


def pdf_blocks(name: str) -> ParseResult:
    return parsed(PDF_DIR / name)


def check_blocks(doc: Document, result: ParseResult) -> None:
    """The parse invariants: exact slices, order, no overlap, coverage, kinds, pages."""
    previous_end = 0
    for block in result.blocks:
        assert doc.text[block.char_start : block.char_end] == block.text
        assert block.char_start >= previous_end, "blocks overlap or are out of order"
        assert block.text == block.text.strip() and block.text
        assert block.doc_id == doc.doc_id and block.doc_sha256 == doc.sha256
        assert block.kind in BLOCK_KINDS
        assert (block.level >= 1) == (block.kind == "heading")
        if doc.is_paged:
            assert 1 <= block.page <= len(doc.pages)
            page = doc.pages[block.page - 1]
            assert page.char_start <= block.char_start < page.char_end
            assert block.bbox_pt is not None
            x0, y0, x1, y1 = block.bbox_pt
            assert -0.5 <= x0 <= x1 <= page.width_pt + 0.5
            assert -0.5 <= y0 <= y1 <= page.height_pt + 0.5
        else:
            assert block.page == 0 and block.bbox_pt is None
        if block.kind == "heading":
            assert block.heading_path and block.heading_path[-1] == " ".join(
                block.heading_path[-1].split()
            )
        previous_end = block.char_end
    covered = [False] * len(doc.text)
    for block in result.blocks:
        covered[block.char_start : block.char_end] = [True] * (block.char_end - block.char_start)
    missing = [i for i, c in enumerate(doc.text) if not covered[i] and not c.isspace()]
    assert not missing, f"characters in no block, first at {missing[:1]}"


@pytest.mark.parametrize("path", openable_pdfs() + text_corpora(), ids=lambda p: p.name)
def test_block_invariants(path: Path) -> None:
    result = parsed(path)
    assert result.parser == "fast" and result.elapsed_s >= 0
    check_blocks(load(path), result)


# A few small PDFs (two columns, a landscape table, formulas, a Google Docs export): the
# layout model costs about a second a page, so the invariants run on these under every
# parser that is not the fast one (about 5 s together here).
LAYOUT_PDFS = [
    "pypdfsf_multicolumn.pdf",
    "plumber_nics-background-checks-2015-11.pdf",
    "elstest-5p.pdf",
    "pypdfsf_google-doc-document.pdf",
]


@pytest.mark.parametrize("parser", [p for p in PARSERS if p != "fast"])
@pytest.mark.parametrize("name", LAYOUT_PDFS)
def test_block_invariants_of_the_other_parsers(name: str, parser: str) -> None:
    doc = load(PDF_DIR / name)
    result = parse_document(doc, parser=parser)  # type: ignore[arg-type]
    assert result.parser == parser and result.blocks
    check_blocks(doc, result)


def test_sigconf_section_headings_have_their_levels() -> None:
    doc = load(PDF_DIR / "sample-sigconf.pdf")
    headings = {
        key(b.text): b for b in pdf_blocks("sample-sigconf.pdf").blocks if b.kind == "heading"
    }
    assert headings[key("1 Introduction")].level == 1
    assert headings[key("2 Template Overview")].level == 1
    assert headings[key("2.1 Template Styles")].level == 2
    assert headings[key("11.2 Display Equations")].level == 2
    listed = [entry for entry in doc.outline if key(entry.title) in headings]
    assert len(listed) >= 0.9 * len(doc.outline)
    assert all(headings[key(entry.title)].level == entry.level for entry in listed)
    authors = [b for b in pdf_blocks("sample-sigconf.pdf").blocks if "Ben Trovato" in b.text]
    assert authors and authors[0].kind != "heading"


def test_heading_paths_are_breadcrumbs() -> None:
    blocks = pdf_blocks("sample-sigconf.pdf").blocks
    styles = next(b for b in blocks if b.text.startswith("The primary parameter given"))
    assert styles.heading_path == ("2 TEMPLATE OVERVIEW", "2.1 Template Styles")
    modifications = next(b for b in blocks if b.text.startswith("Modifying the template"))
    assert modifications.heading_path == ("3 MODIFICATIONS",)


def test_outline_gives_heading_levels() -> None:
    blocks = pdf_blocks("pypdfsf_pdflatex-outline.pdf").blocks
    headings = [b.text for b in blocks if b.kind == "heading" and b.level == 1]
    assert [h for h in headings if re.match(r"\d ", h)] == [
        "1 Foo",
        "2 Bar",
        "3 Baz",
        "4 Foo",
        "5 Bar",
        "6 Baz",
        "7 Foo",
        "8 Bar",
        "9 Baz",
    ]


def test_numbered_headings_without_outline() -> None:
    source = pymupdf.open(PDF_DIR / "sample-sigconf.pdf")
    source.set_toc([])
    doc = load_document(source.tobytes(), name="sigconf-without-outline.pdf")
    assert doc.outline == ()
    blocks = parse_document(doc).blocks
    levels = {b.text.replace("\n", " "): b.level for b in blocks if b.kind == "heading"}
    assert levels["1 INTRODUCTION"] == levels["10 TABLES"] == 1
    assert levels["2.1 Template Styles"] == levels["11.2 Display Equations"] == 2
    assert levels["A.2 Part Two"] == 2
    assert levels["ABSTRACT"] == levels["REFERENCES"] == 1


def test_numbered_levels_in_a_long_thesis() -> None:
    blocks = pdf_blocks("pypdfsf_GeoTopo-komprimiert.pdf").blocks
    levels = {b.text.replace("\n", " "): b.level for b in blocks if b.kind == "heading"}
    assert levels["1 Topologische Grundbegriffe"] == 1
    assert levels["1.1 Topologische Räume"] == 2
    assert levels["4.2.1 Flächeninhalt"] == 3


def test_nics_report_is_a_table() -> None:
    tables = [
        b
        for b in pdf_blocks("plumber_nics-background-checks-2015-11.pdf").blocks
        if b.kind == "table"
    ]
    assert len(tables) == 1
    table = tables[0].text
    assert "Alabama" in table and "Wyoming" in table and "\t" in table
    rows = table.split("\n")
    alabama = next(row for row in rows if row.startswith("Alabama"))
    assert alabama.split("\t")[:3] == ["Alabama", "18,870", "23,022"]


def test_federal_register_running_headers_are_furniture() -> None:
    doc = load(PDF_DIR / "plumber_federal-register-2020-17221.pdf")
    blocks = pdf_blocks("plumber_federal-register-2020-17221.pdf").blocks
    running = [b for b in blocks if "Federal Register / Vol. 85" in b.text]
    assert len(running) >= len(doc.pages) - 1
    assert all(b.kind == "header" for b in running)
    stamps = [b for b in blocks if b.text.startswith("VerDate Sep<11>2014")]
    assert len(stamps) == len(doc.pages) and all(b.kind == "footer" for b in stamps)
    assert not any(b.kind in ("header", "footer") for b in blocks if len(b.text) > 200)


def test_page_numbers_and_running_heads_elsewhere() -> None:
    els = [b for b in pdf_blocks("elstest-5p.pdf").blocks if b.kind in ("header", "footer")]
    assert [b.text for b in els] == ["2", "3", "4"]
    geo = pdf_blocks("pypdfsf_GeoTopo-komprimiert.pdf").blocks
    heads = [b for b in geo if b.kind == "header"]
    assert len(heads) > 90
    assert any(b.text.endswith("1.2. METRISCHE RÄUME") for b in heads)
    assert not any(b.kind == "heading" and "SIMPLIZIALKOMPLEX" in b.text for b in geo)


def test_captions_code_and_lists_in_sigconf() -> None:
    blocks = pdf_blocks("sample-sigconf.pdf").blocks
    kinds = {b.text.split("\n")[0]: b.kind for b in blocks}
    assert kinds["Figure 1: Seattle Mariners at Spring Training, 2010."] == "caption"
    assert kinds["Table 1: Frequency of Special Characters"] == "caption"
    assert kinds["\\documentclass[STYLE]{acmart}"] == "code"
    items = next(b for b in blocks if b.text.startswith("• acmsmall"))
    assert items.kind == "list" and "• acmtog: Used by TOG." in items.text


def test_markdown_blocks_follow_the_syntax() -> None:
    doc = load_document(SAMPLE_MARKDOWN.encode(), name="sample.md")
    result = parse_document(doc)
    check_blocks(doc, result)
    got = [(b.kind, b.level, b.text.split("\n")[0]) for b in result.blocks]
    assert got == [
        ("paragraph", 0, "Intro paragraph"),
        ("heading", 1, "# Title"),
        ("heading", 2, "Setext Heading"),
        ("list", 0, "- item one"),
        ("list", 0, "1. first"),
        ("list", 0, "2) second"),  # CommonMark: another delimiter starts another list
        ("code", 0, "```python"),
        ("code", 0, "indented code"),
        ("table", 0, "| a | b |"),
        ("paragraph", 0, "> a quote"),
        ("heading", 3, "### Deep ###"),
        ("paragraph", 0, "Closing words."),
    ]
    lists = [b for b in result.blocks if b.kind == "list"]
    assert "item three after a blank" in lists[0].text
    by_text = {b.text.split("\n")[0]: b for b in result.blocks}
    assert by_text["Closing words."].heading_path == ("Title", "Setext Heading", "Deep")
    assert by_text["- item one"].heading_path == ("Title", "Setext Heading")
    assert by_text["### Deep ###"].heading_path == ("Title", "Setext Heading", "Deep")


def _block_tokens(text: str) -> tuple[list[tuple], list[tuple]]:
    """The block tokens (type, level, line map, tag) of ``text`` by the project's parser
    and by markdown-it's full CommonMark parse, inline rule on."""
    from markdown_it import MarkdownIt

    from core.parse.commonmark import _parser

    def tokens(parser) -> list[tuple]:  # noqa: ANN001
        return [(t.type, t.level, t.map, t.tag) for t in parser.parse(text) if t.type != "inline"]

    return tokens(_parser()), tokens(MarkdownIt("commonmark").enable("table"))


@pytest.mark.parametrize(
    "text",
    [
        SAMPLE_MARKDOWN,
        "[ref]: https://example.org\n\nA [ref] link, `code [x`, *emph [y*\n\n- [ ] task\n",
        "[" * 2000 + "\n\n" + "*_" * 1000 + "\n# [h](x)\n",
        "<div>\n[a\n</div>\n\n> [quote\n> ]: not a def\n",
    ],
    ids=["sample", "references", "brackets", "html"],
)
def test_markdown_blocks_do_not_depend_on_inline_parsing(text: str) -> None:
    """The block parser runs without the inline rule (hostile bracket runs make it slow);
    the block tokens must be exactly those of the full CommonMark parse."""
    from core.parse.commonmark import _parser

    assert "inline" not in _parser().get_active_rules()["core"]
    ours, full = _block_tokens(text)
    assert ours == full


def test_markdown_corpora_blocks_do_not_depend_on_inline_parsing() -> None:
    files = [*text_corpora(), *sorted(SAMPLE_DOCS.glob("*.md"))]
    assert files
    for path in files:
        ours, full = _block_tokens(path.read_text(encoding="utf-8"))
        assert ours == full, path


def test_plain_text_paragraphs_and_lists() -> None:
    text = "First para\nstill first.\n\n\nSecond:\n- apples\n- pears\n  ripe\n\n3) last one\n"
    doc = load_document(text.encode(), name="notes.txt")
    result = parse_document(doc)
    check_blocks(doc, result)
    assert [(b.kind, b.text) for b in result.blocks] == [
        ("paragraph", "First para\nstill first."),
        ("paragraph", "Second:"),
        ("list", "- apples\n- pears\n  ripe"),
        ("list", "3) last one"),
    ]


def test_layout_parser_falls_back_on_text_and_rejects_unknown_names() -> None:
    doc = load_document(SAMPLE_MARKDOWN.encode(), name="sample.md")
    assert parse_document(doc, parser="layout").blocks == parse_document(doc).blocks
    with pytest.raises(ChunkscopeError):
        parse_document(doc, parser="magic")  # type: ignore[arg-type]


def test_layout_parser_on_a_pdf() -> None:
    doc = load(PDF_DIR / "pypdfsf_pdflatex-outline.pdf")
    ticks: list[tuple[int, int]] = []
    result = parse_document(doc, parser="layout", progress=lambda d, t: ticks.append((d, t)))
    assert result.parser == "layout"
    n = len(doc.pages)  # one tick before each page the model reads, then the whole document
    assert n > 1 and ticks == [(i, n) for i in range(n)] + [(n, n)]
    fast: list[tuple[int, int]] = []
    parse_document(doc, progress=lambda d, t: fast.append((d, t)))
    assert fast == [(n, n)]
    check_blocks(doc, result)
    headings = [b.text for b in result.blocks if b.kind == "heading"]
    assert "1 Foo" in headings and "9 Baz" in headings
    assert {b.level for b in result.blocks if b.text == "5 Bar"} == {1}


def test_tables_and_page_numbers_of_small_documents() -> None:
    tables = [b for b in pdf_blocks("pypdfsf_google-doc-document.pdf").blocks if b.kind == "table"]
    assert len(tables) == 1
    rows = tables[0].text.split("\n")
    assert rows[2].split("\t") == [
        "Capital",
        "Jakarta",
        "Berlin",
        "Vienna",
        "Paris",
        "Vatican City",
    ]
    footers = [b for b in pdf_blocks("pypdfsf_multicolumn.pdf").blocks if b.kind == "footer"]
    assert [(b.text, b.page) for b in footers] == [("1", 1), ("2", 2), ("3", 3)]


def test_garbled_text_is_flagged_and_prose_figures_and_rules_are_not():
    from core.parse.garbled import garbled

    assert garbled(".><57=+?=>/B/+.><=#0$1D23#...")  # a figure's labels in a custom font
    assert garbled("\ufffd\ufffd abc defghijkl")  # glyphs with no Unicode mapping
    for text in (
        "The pump starts at two bar.",
        "$ 2,297,282 $ 1,806,686 (347) 12.5%",
        "(1) (2) — — 4.5% 51 bps",
        "_" * 50,
        "short =+<>",
    ):
        assert not garbled(text), text


def test_blocks_of_unmapped_glyphs_are_flagged_garbled():
    from core.chunk import chunk_document, policy_from_args
    from core.formats import load_document, parse_document

    doc = load_document(PDF_DIR / "pypdfsf_habibi-rotated.pdf")
    blocks = parse_document(doc).blocks
    assert blocks and all(b.garbled for b in blocks if "\ufffd" * 4 in b.text)
    chunks = chunk_document(doc, blocks, policy_from_args("fixed", 200))
    flagged = [(b.char_start, b.char_end) for b in blocks if b.garbled]
    for chunk in chunks:  # a chunk is flagged exactly when it overlaps a garbled block
        touches = any(a < chunk.char_end and chunk.char_start < b for a, b in flagged)
        assert chunk.garbled == touches
    doc = load_document(PDF_DIR / "sample-sigconf.pdf")
    assert not any(b.garbled for b in parse_document(doc).blocks)
