"""core.render: page images, per-line span boxes, chunk segments, escaped markup, links."""

from __future__ import annotations

import dataclasses
import functools
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import load_document
from core.provenance.cite import CitationStatus
from core.provenance.geometry import union_of
from core.provenance.types import BLOCK_KINDS, Block, Chunk, ChunkPolicy, Document
from core.render import charts, links, markup, overlay, pages, views
from tests.conftest import PDF_DIR, PDF_PASSWORDS, SAMPLE_DOCS, openable_pdfs

INJECTION = '<script>alert("x")</script><img src=x onerror=alert(1)> & "quotes" \'single\''


@functools.cache
def corpus_doc(name: str) -> Document:
    return load_document(PDF_DIR / name, password=PDF_PASSWORDS.get(name))


def boxed(doc: Document, a: int, b: int) -> np.ndarray:
    """Text indices in [a, b) whose character has a box."""
    assert doc.char_bbox_pt is not None and doc.char_page is not None
    idx = np.arange(a, b)
    ok = np.isfinite(doc.char_bbox_pt[a:b]).all(axis=1) & (doc.char_page[a:b] > 0)
    return idx[ok]


def page_spans(doc: Document) -> list[tuple[int, int]]:
    """For each page with text: the whole page, and a span starting mid-page."""
    spans = []
    for page in doc.pages:
        if page.char_end > page.char_start:
            mid = (page.char_start + page.char_end) // 2
            spans += [(page.char_start, page.char_end), (mid, min(page.char_end, mid + 300))]
    return spans


# -- line boxes ------------------------------------------------------------------------


@pytest.mark.parametrize("path", openable_pdfs(), ids=lambda p: p.name)
def test_line_boxes_cover_exactly_the_boxed_characters(path):
    doc = corpus_doc(path.name)
    assert doc.char_bbox_pt is not None
    for a, b in page_spans(doc):
        lines = overlay.span_line_boxes(doc, a, b)
        covered: list[int] = []
        for line in lines:
            assert a <= line.char_start < line.char_end <= b
            inside = boxed(doc, line.char_start, line.char_end)
            covered.extend(inside.tolist())
            assert set(doc.char_page[inside].tolist()) == {line.page}
            boxes = doc.char_bbox_pt[inside]
            x0, y0, x1, y1 = line.bbox_pt
            assert np.all(np.isfinite(line.bbox_pt))
            assert x0 <= boxes[:, 0].min() + 1e-3 and y0 <= boxes[:, 1].min() + 1e-3
            assert x1 >= boxes[:, 2].max() - 1e-3 and y1 >= boxes[:, 3].max() - 1e-3
        # every boxed character of the span lies on exactly one line box
        assert covered == boxed(doc, a, b).tolist()
        assert len(lines) <= max(1, len(covered))


def test_a_title_line_is_one_box_and_a_paragraph_is_one_box_per_line():
    doc = corpus_doc("sample-sigconf.pdf")
    title = "The Name of the Title Is Hope"
    start = doc.text.index(title)
    lines = overlay.span_line_boxes(doc, start, start + len(title))
    assert len(lines) == 1 and lines[0].page == 1
    assert doc.text[lines[0].char_start : lines[0].char_end] == title
    # two consecutive laid-out lines of body text: two boxes, stacked
    page2 = doc.pages[1]
    body = [
        ln
        for ln in overlay.span_line_boxes(doc, page2.char_start, page2.char_end)
        if ln.bbox_pt[2] - ln.bbox_pt[0] > 200
    ]
    first, second = body[0], body[1]
    two = overlay.span_line_boxes(doc, first.char_start, second.char_end)
    assert len(two) == 2 and two[1].bbox_pt[1] > two[0].bbox_pt[1]


def test_rotated_pages_merge_vertical_runs_of_text():
    doc = corpus_doc("pypdfsf_habibi-rotated.pdf")
    for page in doc.pages:
        lines = overlay.span_line_boxes(doc, page.char_start, page.char_end, page=page.number)
        n_chars = len(boxed(doc, page.char_start, page.char_end))
        assert 0 < len(lines) <= 3 < n_chars  # merged per line, not one box per glyph


def test_reflowable_text_and_empty_spans_have_no_boxes():
    text_doc = load_document(SAMPLE_DOCS / "state_of_the_union.md")
    assert overlay.span_line_boxes(text_doc, 0, 100) == []
    doc = corpus_doc("sample-sigconf.pdf")
    assert overlay.span_line_boxes(doc, 10, 10) == []
    assert overlay.span_line_boxes(doc, 0, 500, page=3) == []


def test_highlight_shapes_carry_exactly_the_cited_characters():
    doc = corpus_doc("sample-sigconf.pdf")
    start = doc.text.index("ACM")
    end = start + 400
    page = doc.pages_of(start, end)[0]
    shapes = views.highlight_shapes(doc, start, end, page)
    texts = [dict(s.data)["text"] for s in shapes]
    glyphs = "".join(doc.text[i] for i in boxed(doc, start, end) if doc.char_page[i] == page)
    # the lines hold the cited glyphs of this page in order; between lines only the
    # builder's inserted line breaks are left out
    assert "".join(texts) == glyphs
    assert len(shapes) >= 5
    view = views.focus_view(doc, start, end, page)
    assert view is not None
    union = union_of(s.bbox_pt for s in shapes)
    assert view[1] <= union[1] and view[3] >= union[3]
    assert 0 <= view[1] < view[3] <= doc.pages[page - 1].height_pt


# -- page images -----------------------------------------------------------------------


def test_page_png_is_sharp_and_cached():
    doc = corpus_doc("plumber_nics-background-checks-2015-11.pdf")
    pages.clear_page_cache()
    png = pages.render_page_png(doc, 1, 2.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    info = doc.pages[0]
    assert abs(width - 2 * info.width_pt) <= 2 and abs(height - 2 * info.height_pt) <= 2
    assert pages.render_page_png(doc, 1, 2.0) is png
    assert pages.cached_page_count() == 1


def test_page_png_refuses_text_and_missing_pages():
    with pytest.raises(ValueError, match="no pages"):
        pages.render_page_png(load_document(SAMPLE_DOCS / "state_of_the_union.md"), 1)
    with pytest.raises(ValueError, match="pages 1-1"):
        pages.render_page_png(corpus_doc("plumber_nics-background-checks-2015-11.pdf"), 2)


# -- chunk segments --------------------------------------------------------------------


@st.composite
def sorted_spans(draw):
    raw = draw(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=25))
    return sorted((a, a + n) for a, n in raw)


@settings(max_examples=200, deadline=None)
@given(spans=sorted_spans(), window=st.tuples(st.integers(0, 150), st.integers(0, 120)))
def test_segments_partition_the_covered_characters(spans, window):
    w0, w1 = window[0], window[0] + window[1]
    segments = overlay.chunk_segments(spans, w0, w1)
    seen = {}
    for seg in segments:
        assert w0 <= seg.char_start < seg.char_end <= w1
        for pos in range(seg.char_start, seg.char_end):
            assert pos not in seen
            seen[pos] = seg.chunk_indices
    for pos in range(w0, w1):
        expected = tuple(i for i, (a, b) in enumerate(spans) if a <= pos < b)
        assert seen.get(pos, ()) == expected
    for left, right in zip(segments, segments[1:], strict=False):
        assert left.char_end <= right.char_start
        assert left.char_end < right.char_start or left.chunk_indices != right.chunk_indices


def _chunks(doc: Document, spans: list[tuple[int, int]]) -> list[Chunk]:
    policy = ChunkPolicy(name="fixed", size=400, overlap=50)
    return [
        Chunk(
            chunk_id=f"c{i}",
            doc_id=doc.doc_id,
            doc_sha256=doc.sha256,
            char_start=a,
            char_end=b,
            text=doc.text[a:b],
            pages=doc.pages_of(a, b),
            heading_path=("Intro",),
            block_kinds=("paragraph",),
            token_count=(b - a) // 4,
            policy=policy,
        )
        for i, (a, b) in enumerate(spans)
    ]


def test_chunk_shapes_alternate_colours_and_band_overlaps():
    doc = corpus_doc("sample-sigconf.pdf")
    page = doc.pages[1]
    spans = [(page.char_start + k * 350, page.char_start + k * 350 + 400) for k in range(5)]
    chunks = _chunks(doc, spans)
    shapes = views.chunk_shapes(doc, chunks, 2)
    kinds = {(s.css_class, s.fill, s.hatched) for s in shapes}
    assert ("cs-chunk", overlay.CHUNK_COLOURS[0], False) in kinds
    assert ("cs-chunk", overlay.CHUNK_COLOURS[1], False) in kinds
    assert ("cs-overlap", overlay.OVERLAP_COLOUR, False) in kinds  # a faint tint ...
    assert ("cs-overlap-band", overlay.OVERLAP_COLOUR, False) in kinds  # ... and a band
    assert sorted(s.label for s in shapes if s.label) == ["1", "2", "3", "4", "5"]
    assert {s.css_class for s in shapes if s.label} == {"cs-margin-label"}
    assert all(s.data[0][0] == "chunks" for s in shapes)  # the page counts chunks by it
    marks = views.chunk_marks(chunks, spans[0][0], spans[-1][1])
    assert [m.char_start for m in marks] == sorted(m.char_start for m in marks)
    assert all(a.char_end <= b.char_start for a, b in zip(marks, marks[1:], strict=False))
    assert sorted(dict(m.data)["start"] for m in marks if m.data) == ["1", "2", "3", "4", "5"]


# -- escaped markup --------------------------------------------------------------------


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []
        self.values: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(name for name, _ in attrs)
        self.values.extend(value or "" for _, value in attrs)

    def handle_data(self, data):
        self.text.append(data)


def collect(html: str) -> _Collector:
    parser = _Collector()
    parser.feed(html)
    parser.close()
    return parser


def test_document_text_in_svg_and_text_is_inert():
    shape = markup.Shape(bbox_pt=(1, 2, 30, 12), fill="#ff0000", title=INJECTION, label="1")
    page = markup.page_html(b"png", width_pt=100, height_pt=100, shapes=[shape], alt=INJECTION)
    found = collect(page)
    assert found.tags == ["div", "div", "img", "div", "span", "span"]  # nothing injected
    assert not any(a.startswith("on") for a in found.attrs)
    assert INJECTION in found.text  # shown as the tooltip's text, literally
    assert INJECTION in found.values  # the accessible description
    text = "Before " + INJECTION + " after"
    marks = [markup.Mark(char_start=107, char_end=115, css_class="cs-hl", title=INJECTION)]
    html = markup.marked_text_html(text, 100, marks)
    found = collect(html)
    assert found.tags == ["div", "mark"] and "".join(found.text) == text


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab <>&\"'/=\n\u05d0\u0301😀")), max_size=80),
    cut=st.tuples(st.integers(0, 80), st.integers(0, 80)),
)
def test_marked_text_round_trips_any_text(text, cut):
    a, b = sorted(cut)
    marks = [markup.Mark(char_start=a, char_end=b, css_class="cs-chunk", colour="#2e86ab")]
    found = collect(markup.marked_text_html(text, 0, marks))
    assert "".join(found.text) == text
    assert set(found.tags) <= {"div", "mark"}


def test_markup_refuses_unsafe_classes_and_colours():
    with pytest.raises(ValueError):
        markup.marked_text_html(
            "x", 0, [markup.Mark(char_start=0, char_end=1, css_class='a" onclick="')]
        )
    with pytest.raises(ValueError):
        markup.legend_html([("x", "red;background:url(x)")])


# -- views of blocks and documents --------------------------------------------------------


def test_block_shapes_use_the_palette_and_describe_the_block():
    doc = corpus_doc("sample-sigconf.pdf")
    block = Block(
        doc_id=doc.doc_id, doc_sha256=doc.sha256, kind="heading", char_start=0,
        char_end=29, text=doc.text[:29], page=1, bbox_pt=None, heading_path=(), level=1,
    )  # fmt: skip
    other = dataclasses.replace(block, kind="paragraph", level=0, page=2)
    shapes = views.block_shapes(doc, [block, other], 1, {"heading", "paragraph"})
    assert len(shapes) == 1 and shapes[0].fill == overlay.BLOCK_COLOURS["heading"]
    assert "heading (level 1)" in shapes[0].title and "chars 0-29" in shapes[0].title
    assert views.block_shapes(doc, [block], 1, {"paragraph"}) == []
    assert set(overlay.BLOCK_COLOURS) == set(BLOCK_KINDS)


def test_context_window_holds_the_span():
    doc = load_document(SAMPLE_DOCS / "state_of_the_union.md")
    a, b = views.context_window(doc, 1000, 1100, chars=200)
    assert a <= 1000 and b >= 1100 and b - a < 600


# -- charts and links ---------------------------------------------------------------------


def test_length_chart_numbers():
    assert charts.overflow_share([100, 300, 5000, 10], 254) == 0.5
    assert charts.overflow_share([], 254) == 0.0
    stats = charts.length_percentiles([10, 20, 30])
    assert stats["p50"] == 20 and stats["max"] == 30
    fig = charts.document_lengths_figure(["a<b", "c"], [10, 1000], 510, chunk_window_tokens=254)
    assert "50% of 2 too long for one pass" in fig.layout.title.text
    assert {s.y0 for s in fig.layout.shapes} >= {510, 254}
    for limit in (510, 254):  # annotations on a log axis are in log10 units
        assert any(abs(10**a.y - limit) < 1e-6 for a in fig.layout.annotations)


def test_links_verify_hash_and_quote():
    doc = load_document(SAMPLE_DOCS / "state_of_the_union.md")
    quote = doc.text[10:60]
    params = {"sha": doc.sha256, "qh": links.quote_hash(quote)}
    assert links.check_link(doc, 10, 60, **params).status is CitationStatus.OK
    assert links.check_link(doc, 11, 61, **params).status is CitationStatus.MISMATCH
    stale = links.check_link(doc, 10, 60, sha="0" * 64, qh=params["qh"], previous_shas=["0" * 64])
    assert stale.status is CitationStatus.STALE and "earlier version" in stale.detail
    assert links.check_link(doc, 10, len(doc.text) + 5).status is CitationStatus.MISMATCH
    doc_only = links.check_link(doc, 10, 60, sha=doc.sha256)  # no quote hash
    assert doc_only.tone == "info" and not doc_only.headline.startswith("Verified")
    assert "Document verified, the span's text was not" in doc_only.headline
    assert links.check_link(doc, 10, 60, **params).headline.startswith("Verified")
    assert links.parse_span("120-180") == (120, 180)
    assert links.parse_span("180-120") is None and links.parse_span("x") is None
    for odd in ("²-3", "1-³", "١٢-٣٤", "-1-5", "1-2-3", " 1-2", "1-2\n", ""):
        assert links.parse_span(odd) is None, odd  # superscripts would crash int()
    url = links.link_url("http://h:1", {"doc": "a b", "span": "1-2"})
    assert url == "http://h:1/source?doc=a+b&span=1-2"
