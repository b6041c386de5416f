"""Chunk numbers stay readable however many chunks a page holds: a label never drifts more than its
own height from the line it names; starts too close to label each share one label that
names the run (``12–15``), so a crowded margin never piles numbers into a jumble."""

from __future__ import annotations

import functools

import pytest
from conftest import CORPUS, need_corpus

from core.chunk import chunk_document
from core.formats import load_document, parse_document
from core.provenance.types import ChunkPolicy
from core.render import overlay, views

FILINGS = CORPUS / "financebench" / "pdfs"


def _meet(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


@functools.cache
def _tiny_chunks(name: str):
    path = need_corpus(FILINGS / f"{name}.pdf")
    doc = load_document(path)
    chunks = chunk_document(
        doc, parse_document(doc).blocks, ChunkPolicy(name="fixed", size=50, overlap=0, unit="chars")
    )  # the smallest size the slider has
    return doc, chunks


@pytest.mark.parametrize(("name", "page"), [("JOHNSON_JOHNSON_2022Q4_EARNINGS", 24),
                                            ("MGMRESORTS_2022Q4_EARNINGS", 10)])  # fmt: skip
def test_tiny_chunks_keep_their_numbers_by_their_lines(name: str, page: int) -> None:
    doc, chunks = _tiny_chunks(name)
    assert len(chunks) > 900  # (their numbers once cascaded 350 pt down, off the page)
    info = doc.pages[page - 1]
    shapes = views.chunk_shapes(doc, chunks, page)
    labels = [s for s in shapes if s.css_class == "cs-margin-label"]
    named = [n for s in labels for n in s.data[0][1].split()]
    starting = {
        str(i + 1) for i, c in enumerate(chunks)
        if info.char_start <= c.char_start < info.char_end
        and overlay.span_line_boxes(doc, c.char_start, c.char_end, page=page)
    }  # fmt: skip
    assert len(starting) > 40 and sorted(named) == sorted(starting)  # each exactly once
    ticks = [s for s in shapes if s.css_class == "cs-start-tick"]
    for n, a in enumerate(labels):
        first = next(t.bbox_pt for t in ticks if t.data == a.data)  # its first start's line
        height = a.bbox_pt[3] - a.bbox_pt[1]
        assert a.bbox_pt[1] - (first[1] + first[3] - height) / 2 <= height + 1e-6  # no drift
        x0, y0, x1, y1 = a.bbox_pt
        assert 0 <= x0 < x1 <= info.width_pt and 0 <= y0 < y1 <= info.height_pt
        assert all(_meet(a.bbox_pt, b.bbox_pt) == 0 for b in labels[n + 1 :])
    assert len(ticks) == len(starting)  # every start still ticked on its own line


def test_a_run_of_starts_on_close_lines_shares_one_label() -> None:
    lines = [(100.0, 200.0 + 4 * k, 300.0, 203.0 + 4 * k) for k in range(6)]  # 4 pt apart
    anchors = [(str(n + 1), "#2e86ab", line) for n, line in enumerate(lines)]
    placed = overlay.margin_labels(anchors, (72.0, 72.0, 540.0, 720.0), 612.0)
    for label in placed:
        first_line = label.starts_pt[0]
        height = label.bbox_pt[3] - label.bbox_pt[1]
        wanted = (first_line[1] + first_line[3] - height) / 2
        assert label.bbox_pt[1] - wanted <= height  # never far from its first line
    assert [n for p in placed for n in p.numbers] == [str(n) for n in range(1, 7)]
    assert any("–" in p.text for p in placed)  # a run: "first–last"
