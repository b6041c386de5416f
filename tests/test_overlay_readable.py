"""The Chunks overlay leaves the page readable at any overlap: chunk numbers sit in the
margin beside their lines, never on glyphs; an overlap is a thin band under its lines, not
a hatched fill over them."""

from __future__ import annotations

import functools

import pytest
from conftest import CORPUS, SAMPLE_DOCS, need_corpus

from core.chunk import chunk_document
from core.formats import load_document, parse_document
from core.provenance.types import BBox, ChunkPolicy
from core.render import markup, overlay, views

PAGES = [
    (SAMPLE_DOCS / "sample-sigconf.pdf", 1),  # two columns under a centred title block
    (SAMPLE_DOCS / "sample-sigconf.pdf", 2),
    (CORPUS / "financebench" / "pdfs" / "Pfizer_2023Q2_10Q.pdf", 40),  # a 10-Q: narrow margins
]
OVERLAPS = (0, 20, 40)  # percent of an 800-character fixed chunk


@functools.cache
def parsed(path):
    doc = load_document(need_corpus(path))
    return doc, parse_document(doc).blocks


def shapes_at(path, page: int, share: int):
    doc, blocks = parsed(path)
    policy = ChunkPolicy(name="fixed", size=800, overlap=8 * share, unit="chars")
    chunks = chunk_document(doc, blocks, policy)
    lines = overlay.span_line_boxes(doc, *views.page_span(doc, page), page=page)
    glyphs = [line.bbox_pt for line in lines]
    return doc, chunks, views.chunk_shapes(doc, chunks, page), glyphs


def _meet(a: BBox, b: BBox) -> float:
    """Area (pt²) of the intersection of two boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


@pytest.mark.parametrize("share", OVERLAPS)
@pytest.mark.parametrize(("path", "page"), PAGES, ids=lambda v: getattr(v, "stem", str(v)))
def test_chunk_numbers_sit_beside_the_text_not_on_it(path, page, share):
    doc, chunks, shapes, glyphs = shapes_at(path, page, share)
    info = doc.pages[page - 1]
    labels = [s for s in shapes if s.css_class == "cs-margin-label"]
    starting = {
        str(i + 1) for i, c in enumerate(chunks)
        if info.char_start <= c.char_start < info.char_end
        and overlay.span_line_boxes(doc, c.char_start, c.char_end, page=page)
    }  # fmt: skip
    assert starting and sorted(s.label for s in labels) == sorted(starting)  # each once
    for label in labels:
        x0, y0, x1, y1 = label.bbox_pt
        assert 0 <= x0 < x1 <= info.width_pt and 0 <= y0 < y1 <= info.height_pt
        assert not [g for g in glyphs if _meet(label.bbox_pt, g) > 0], label.label
        assert overlay.MIN_LABEL_FONT_PT <= label.label_size_pt <= overlay.LABEL_FONT_PT
    for n, a in enumerate(labels):
        assert all(_meet(a.bbox_pt, b.bbox_pt) == 0 for b in labels[n + 1 :])
    assert not [s for s in shapes if s.label and s.css_class != "cs-margin-label"]


@pytest.mark.parametrize(("path", "page"), PAGES, ids=lambda v: getattr(v, "stem", str(v)))
def test_a_40_percent_overlap_page_still_reads(path, page):
    _, _, shapes, glyphs = shapes_at(path, page, 40)
    assert not [s for s in shapes if s.hatched]
    text_area = sum((g[2] - g[0]) * (g[3] - g[1]) for g in glyphs)
    overlapped = [s for s in shapes if s.css_class == "cs-overlap"]
    shared = sum(_meet(s.bbox_pt, s.bbox_pt) for s in overlapped)
    assert shared > 0.3 * text_area  # most of such a page is shared by two chunks ...
    inked = sum(  # ... yet what lies opaque on the glyphs is a small part of them
        _meet(s.bbox_pt, g) for s in shapes if s.fill_opacity > 0.3 for g in glyphs
        if s.css_class != "cs-margin-label"
    )  # fmt: skip
    assert inked < 0.1 * text_area, inked / text_area
    tints = {s.fill_opacity for s in shapes if s.css_class in ("cs-chunk", "cs-overlap")}
    assert max(tints) <= 0.2  # the tint under every glyph stays light


def test_labels_fill_their_box_at_the_pages_scale():
    doc, _, shapes, _ = shapes_at(*PAGES[0], 20)
    info = doc.pages[0]
    label = next(s for s in shapes if s.css_class == "cs-margin-label")
    html = markup.page_html(b"", width_pt=info.width_pt, height_pt=info.height_pt, shapes=[label])
    size = 100 * label.label_size_pt / info.width_pt
    assert f"font-size:{size:.3f}cqw" in html and "cs-label-fit" in html
    assert "container-type: inline-size" in markup.STYLESHEET


def test_crowded_starts_stack_in_their_margin():
    line = (100.0, 200.0, 300.0, 210.0)
    anchors = [(str(n), "#2e86ab", line) for n in range(1, 5)]  # four chunks on one line
    placed = overlay.margin_labels(anchors, (72.0, 72.0, 540.0, 720.0), 612.0)
    boxes = [p.bbox_pt for p in placed]
    assert all(b[2] <= 72.0 for b in boxes)  # all in the left margin
    assert all(_meet(a, b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    right = overlay.margin_labels(
        [("9", "#f18f01", (400.0, 300, 500, 310))], (72, 72, 540, 720), 612
    )
    assert right[0].bbox_pt[0] >= 540.0  # a line in the right half: the right margin
