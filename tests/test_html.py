"""HTML: canonical text from the tokenised markup, each character mapped to the bytes of
the raw file it came from; every policy keeps exact offsets; bad files fail in one line."""

from __future__ import annotations

import functools
import html

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunk import assert_chunk_invariants
from test_chunk_corpus import POLICIES

from core.chunk import chunk_document
from core.errors import ChunkscopeError, EmptyFileError, UnsupportedFileError
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.types import Block, ChunkPolicy, Document

DATA = ROOT / "tests" / "data" / "formats"
TRICKY = (
    "\ufeff<HTML><BODY>\r\n<H2>Caf\u00e9 na\u00efve &amp co</H2>\r\n"
    "<P>first paragraph, never closed\r\n<P>second &#8212; with &lt;tags&gt; written out"
    "<div>a div <span>inside</span>\tit</div>\r\n"
    "<table><tr><td>outer<table><tr><td>inner</td></tr></table></td><td>next</td></tr></table>"
    "<pre>\r\nline one\r\n\tindented &amp; escaped\r\n</pre>"
    "<ol><li>one<li>two<li>\u4e09 \U0001f680</ol>trailing text"
).encode()


@functools.cache
def parsed(name: str) -> tuple[Document, tuple[Block, ...]]:
    doc = (
        load_document(TRICKY, name="tricky.html")
        if name == "tricky"
        else load_document(DATA / name)
    )
    return doc, parse_document(doc).blocks


FILES = [*sorted(p.name for p in DATA.glob("*.html")), "tricky"]


def char_groups(doc: Document):
    """Runs of characters that share one raw byte range (one reference, or one char)."""
    raw = doc.char_raw_span
    i = 0
    while i < len(doc.text):
        j = i + 1
        while j < len(doc.text) and (raw[j] == raw[i]).all():
            j += 1
        yield i, j, int(raw[i, 0]), int(raw[i, 1])
        i = j


def assert_raw_map(doc: Document) -> None:
    """Every mapped character's raw bytes unescape to it (a folded space: a whitespace
    run; a line end in <pre>: CRLF or CR); unmapped ones are separators; order kept."""
    assert doc.kind == "html" and doc.char_raw_span.shape == (len(doc.text), 2)
    raw = doc.source_bytes
    starts = []
    for i, j, a, b in char_groups(doc):
        text = doc.text[i:j]
        if a < 0:
            assert set(text) <= {"\n", "\t", " "}, (i, text)  # separators and line breaks
            continue
        source = raw[a:b].decode("utf-8")
        if text == " " and not source.startswith("&"):
            assert source.strip(" \t\r\n\f") == "", (i, source)  # a folded whitespace run
        elif not (text == "\n" and source in ("\r\n", "\r")):  # else a line end in <pre>
            assert html.unescape(source) == text, (i, source, text)
        starts.append(a)
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


@pytest.mark.parametrize("name", FILES)
def test_every_character_maps_to_its_raw_bytes(name: str) -> None:
    assert_raw_map(parsed(name)[0])


_PIECES = st.sampled_from(
    [
        "<p>", "</p>", "<h1>", "</h1>", "<h3>", "</h3>", "<ul>", "<li>", "</ul>", "<ol>",
        "</ol>", "<table>", "<tr>", "<td>", "<th>", "</table>", "<pre>", "</pre>", "<br>",
        "<b>", "</b>", "<div>", "</div>", "<caption>", "</caption>", "<!-- c -->",
        "<script>x<y</script>", "<style>p{}</style>", "&amp;", "&lt;", "&#233;", "&#x1F600;",
        "&nbsp;", "&T", "&copy", " ", "  ", "\t", "\n", "\r\n", "\r", "word", "Caf\u00e9",
        "\u05e9\u05dc\u05d5\u05dd", "e\u0301", "\U0001f469\u200d\U0001f467", ">", "a < b",
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=60))
def test_random_markup_keeps_the_raw_map(pieces: list[str]) -> None:
    source = "".join(pieces)
    try:
        doc = load_document(source.encode(), name="random.html")
    except EmptyFileError:
        return
    assert_raw_map(doc)
    for block in parse_document(doc).blocks:
        assert doc.text[block.char_start : block.char_end] == block.text


@pytest.mark.parametrize("name", FILES)
def test_scripts_styles_and_comments_never_become_text(name: str) -> None:
    doc, blocks = parsed(name)
    for hidden in ("SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "comment", "font-family", "<"):
        assert hidden not in doc.text or (hidden == "<" and "&lt;" in doc.source_bytes.decode())
    for block in blocks:
        assert doc.text[block.char_start : block.char_end] == block.text


def test_what_the_pump_page_says() -> None:
    doc, blocks = parsed("pumps.html")
    assert doc.title == "Pump care & maintenance"
    kinds = [(b.kind, b.level) for b in blocks]
    assert ("heading", 1) in kinds and ("heading", 3) in kinds
    assert {"list", "table", "code", "caption", "paragraph"} <= {b.kind for b in blocks}
    table = next(b for b in blocks if b.kind == "table")
    assert table.text.split("\n")[0] == "Quantity\tMinimum\tMaximum"
    assert "Fluid temperature (\u00b0C)\t\u221210\t90" in table.text
    code = next(b for b in blocks if b.kind == "code")
    assert code.text == "$ pumpctl start --prime\n  primed: yes\n  running at 2900 rpm"
    assert "Non\u00a0breaking" in doc.text and "AT&T" in doc.text
    start = doc.text.index("bearings")  # test-side lookup of a known word
    a, b = doc.raw_range(start, start + len("bearings."))
    assert doc.source_bytes[a:b] == b"bearings</b>."  # the raw range, tags included


def test_an_svg_title_is_neither_text_nor_the_documents_title() -> None:
    doc = load_document(
        b"<title>Page</title><p>Drawn: <svg><title>icon</title><text>T</text></svg> done</p>",
        name="svg.html",
    )
    assert doc.title == "Page" and doc.text == "Drawn: done"


def test_tricky_markup() -> None:
    doc, blocks = parsed("tricky")
    assert blocks[0].kind == "heading" and blocks[0].text == "Caf\u00e9 na\u00efve & co"
    texts = [b.text for b in blocks]
    assert "first paragraph, never closed" in texts
    assert "second \u2014 with <tags> written out" in texts
    assert "a div inside it" in texts
    assert "line one\n\tindented & escaped" in texts
    assert "one\ntwo\n\u4e09 \U0001f680" in texts and texts[-1] == "trailing text"
    rocket = doc.text.index("\U0001f680")
    a, b = doc.char_raw_span[rocket]
    assert b - a == 4 and doc.source_bytes[a:b].decode() == "\U0001f680"  # bytes, not chars


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.key)
@pytest.mark.parametrize("name", FILES)
def test_every_policy_keeps_offsets_and_raw_ranges(name: str, policy: ChunkPolicy) -> None:
    doc, blocks = parsed(name)
    tokenizer = load_tokenizer()
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    for chunk in chunks:
        a, b = doc.raw_range(chunk.char_start, chunk.char_end)
        first = doc.char_raw_span[chunk.char_start]
        assert (
            a == first[0]
            and html.unescape(doc.source_bytes[a : first[1]].decode()) == chunk.text[0]
        )
        assert np.all(doc.char_raw_span[chunk.char_start : chunk.char_end, 1] <= b)


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        (b"<p>caf\xe9</p>", UnsupportedFileError, "not UTF-8"),
        (
            b"<html><script>only()</script><style>p{}</style></html>",
            EmptyFileError,
            "no visible text",
        ),
        (b"<p>\x00\x01</p>", UnsupportedFileError, "binary"),
    ],
)
def test_bad_html_fails_in_one_line(data: bytes, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        load_document(data, name="bad.html")
    assert "\n" not in str(caught.value) and isinstance(caught.value, ChunkscopeError)
