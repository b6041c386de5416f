"""Ruled tables found from the characters ingest already has (``core.tables.ruled``):
the same tables as ``find_tables`` itself (edges within 0.1 pt: its snapped edges average
the rulings a character decides to keep), without its second text extraction."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from core.ingest.pdf_lines import block_lines, visible_char_boxes
from core.ingest.pdf_text import RAWDICT_FLAGS, unrotated_rect
from core.tables import ruled
from core.tables.finder import _find
from core.tables.ruled_edges import drawing_edges, merged_edges, text_boxes
from tests.conftest import CORPUS, PDF_DIR, need_corpus

FILINGS = CORPUS / "financebench" / "pdfs"
# Pages whose rulings and text send them to the table finder (ruled tables of a
# register, a casino operator's statements, a 10-Q's text tables, a data model).
RULED_PAGES = [
    (PDF_DIR / "plumber_WARN-Report-for-7-1-2015-to-03-25-2016.pdf", (0, 1, 14)),
    (FILINGS / "MGMRESORTS_2022Q4_EARNINGS.pdf", (4, 5, 13)),
    (FILINGS / "Pfizer_2023Q2_10Q.pdf", (46, 51, 52, 53, 67)),
    (PDF_DIR / "GeoBase_NHNC1_Data_Model_UML_EN.pdf", (2, 9)),
]


def _ingest_view(page: pymupdf.Page) -> tuple[list, list]:
    """(worded line boxes, visible character boxes) of a page, as ingest builds them."""
    raw = page.get_text("rawdict", flags=RAWDICT_FLAGS)
    rect = unrotated_rect(page)
    blocks = [block_lines(b, rect) for b in raw["blocks"] if b.get("type") == 0]
    blocks = [lines for lines in blocks if lines]
    line_boxes = [ln.bbox for lines in blocks for ln in lines if any(c.isalnum() for c in ln.text)]
    return line_boxes, visible_char_boxes(blocks)


@pytest.mark.parametrize(("path", "pages"), RULED_PAGES, ids=lambda v: getattr(v, "stem", ""))
def test_tables_from_our_characters_match_find_tables(path: Path, pages: tuple) -> None:
    need_corpus(path)
    with pymupdf.open(path) as pdf:
        for number in pages:
            page = pdf[number]
            line_boxes, chars = _ingest_view(page)
            ours = _find(page, line_boxes, chars, rotation=page.rotation_matrix)
            theirs = _find(page, line_boxes, None, rotation=page.rotation_matrix)  # its own text
            flat = [v for r in ours for v in r.text_bbox_pt]
            assert flat == pytest.approx([v for r in theirs for v in r.text_bbox_pt], abs=0.1)
            assert [len(r.rows) for r in ours] == [len(r.rows) for r in theirs]
            headers = [v for r in ours if r.header_page_bbox_pt for v in r.header_page_bbox_pt]
            expected = [v for r in theirs if r.header_page_bbox_pt for v in r.header_page_bbox_pt]
            assert headers == pytest.approx(expected, abs=0.1)


def test_the_finder_extracts_no_text_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    path = PDF_DIR / "plumber_WARN-Report-for-7-1-2015-to-03-25-2016.pdf"
    with pymupdf.open(path) as pdf:
        page = pdf[0]
        _, chars = _ingest_view(page)

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("find_tables' own text extraction was used")

        before = (ruled._table._CHARS_VAR.get(), ruled._table._EDGES_VAR.get())
        monkeypatch.setattr(ruled._table, "make_chars", refuse)
        monkeypatch.setattr(pymupdf.Page, "find_tables", refuse)
        tables = ruled.ruled_cells(page, chars)
    assert tables and all(len(rows) >= 2 for rows in tables)
    # the table module's shared state is put back as it was
    assert (ruled._table._CHARS_VAR.get(), ruled._table._EDGES_VAR.get()) == before


def test_a_rotated_page_goes_through_find_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    with pymupdf.open(PDF_DIR / "plumber_WARN-Report-for-7-1-2015-to-03-25-2016.pdf") as pdf:
        page = pdf[0]
        _, chars = _ingest_view(page)
        page.set_rotation(90)
        calls: list[int] = []
        real = pymupdf.Page.find_tables

        def counted(self: pymupdf.Page, *args: object, **kwargs: object) -> object:
            calls.append(self.number)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(pymupdf.Page, "find_tables", counted)
        ruled.ruled_cells(page, chars)
    assert calls == [0]


@pytest.mark.parametrize(("path", "pages"), RULED_PAGES, ids=lambda v: getattr(v, "stem", ""))
def test_the_linear_steps_give_the_table_modules_results(path: Path, pages: tuple) -> None:
    """Intersections, cells and tables exactly as pymupdf.table computes them."""
    need_corpus(path)
    table = ruled._table
    with pymupdf.open(path) as pdf:
        for number in pages:
            page = pdf[number]
            boxes = _ingest_view(page)[1]
            # with the fields cells_to_tables reads too (ruled_cells tests the boxes)
            chars = [
                {**c, "top": b[1], "bottom": b[3], "text": "x"}
                for c, b in zip(ruled._chars(page, boxes), boxes, strict=True)
            ]
            settings = table.TableSettings.resolve(settings=ruled._settings())
            chars_token = table._CHARS_VAR.set(chars)
            edges_token = table._EDGES_VAR.set([])
            try:
                page.table_settings = settings
                table.make_edges(page, clip=None, tset=settings)
                finder = table.TableFinder.__new__(table.TableFinder)
                finder.page, finder.settings = page, settings
                edges = finder.get_edges()
                tol = (settings.intersection_x_tolerance, settings.intersection_y_tolerance)
                theirs = table.edges_to_intersections(edges, *tol)
                ours = ruled._intersections(edges, *tol)
                assert {k: (v["v"], v["h"]) for k, v in ours.items()} == {
                    k: (v["v"], v["h"]) for k, v in theirs.items()
                }
                cells = ruled._cells(ours)
                assert cells == table.intersections_to_cells(theirs)
                assert ruled._cell_boxes(edges, *tol) == cells  # compiled, where built
                expected = [
                    [
                        tuple(ruled._as_box(c) for c in row.cells)
                        for row in table.Table(page, g).rows
                    ]
                    for g in table.cells_to_tables(page, cells)
                ]
                assert [ruled._cells_to_rows(g) for g in ruled._groups(cells, boxes)] == expected
            finally:
                table._EDGES_VAR.reset(edges_token)
                table._CHARS_VAR.reset(chars_token)


def test_ruled_tables_of_text_only_are_found_and_diagram_boxes_are_not() -> None:
    """Two-column ruled tables (the 10-Q's glossary of defined terms on pp. 4-6) are
    tables of the fast parser; the small ruled class boxes of a UML diagram are not."""
    from core.formats import load_document, parse_document

    path = FILINGS / "Pfizer_2023Q2_10Q.pdf"
    diagram = PDF_DIR / "GeoBase_NHNC1_Data_Model_UML_EN.pdf"
    need_corpus(path), need_corpus(diagram)
    doc = load_document(path)
    tables = [b for b in parse_document(doc).blocks if b.kind == "table"]
    glossary = [b for b in tables if b.page == 4]
    assert len(glossary) == 1 and glossary[0].bbox_pt is not None
    x0, y0, x1, y1 = glossary[0].bbox_pt
    assert x1 - x0 > 500 and y1 - y0 > 500  # the page's whole list of terms
    first_row = doc.text[glossary[0].char_start : glossary[0].char_end].split("\n")[0]
    assert "\t" in first_row  # term, tab, definition
    model = load_document(diagram)
    assert not [b for b in parse_document(model).blocks if b.kind == "table" and b.page == 18]


@pytest.mark.parametrize(("path", "pages"), RULED_PAGES, ids=lambda v: getattr(v, "stem", ""))
def test_character_arrays_equal_the_character_records(path: Path, pages: tuple) -> None:
    """The vectorised inside-test reads arrays equal, value for value, to the records
    ``make_edges`` would have scanned."""
    need_corpus(path)
    with pymupdf.open(path) as pdf:
        for number in pages:
            page = pdf[number]
            boxes = _ingest_view(page)[1]
            records = ruled._chars(page, boxes)
            arrays = ruled.char_arrays(page, boxes)
            for k, key in enumerate(("x0", "y0", "x1", "y1")):
                assert arrays[k].tolist() == [c[key] for c in records]


def _ruled_page(extra_paths: int) -> tuple[pymupdf.Document, pymupdf.Page]:
    """A page with a 4 x 4 ruled table of three-word rows, and ``extra_paths`` small
    circles (a figure's marks, no rulings)."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    for k in range(5):
        page.draw_line((72, 100 + 30 * k), (472, 100 + 30 * k))
        page.draw_line((72 + 100 * k, 100), (72 + 100 * k, 220))
    for row in range(4):
        for col in range(4):
            page.insert_text((80 + 100 * col, 120 + 30 * row), f"cell {row}{col}")
    marks = page.new_shape()
    for k in range(extra_paths):
        marks.draw_circle((80 + (k % 60) * 8, 300 + (k // 60) * 8), 1.5)
        marks.finish()  # one path each
    marks.commit()
    return pdf, page


def test_a_page_of_too_many_drawing_paths_is_not_searched_for_tables() -> None:
    """A figure's thousands of paths would cost find_tables a pairwise join; the page is
    read as a figure (no ruled search) past ``MAX_TABLE_PAGE_PATHS``."""
    from core.tables.table_signals import MAX_TABLE_PAGE_PATHS, page_signals

    for extra, searched in ((10, True), (MAX_TABLE_PAGE_PATHS + 1, False)):
        pdf, page = _ruled_page(extra)
        with pdf:
            line_boxes = _ingest_view(page)[0]
            assert bool(page_signals(page, line_boxes)[0]) is searched, extra


def _make_edges_records(page: pymupdf.Page, boxes: list) -> list[dict]:
    """The edge records of ``pymupdf.table.make_edges`` itself for ``page``, with our
    character records as its CHARS (the state reset afterwards)."""
    table = ruled._table
    settings = table.TableSettings.resolve(settings=ruled._settings())
    chars_token = table._CHARS_VAR.set(ruled._chars(page, boxes))
    edges_token = table._EDGES_VAR.set([])
    page._table_drawings_cache = []
    try:
        table.make_edges(page, clip=None, tset=settings)
        return list(table._EDGES_VAR.get())
    finally:
        del page._table_drawings_cache
        table._EDGES_VAR.reset(edges_token)
        table._CHARS_VAR.reset(chars_token)


def _drawn_pages(path: Path) -> Iterator[tuple[pymupdf.Page, list]]:
    """Every page of ``path`` that draws something, with its visible character boxes."""
    with pymupdf.open(path) as pdf:
        for page in pdf:
            if page.get_cdrawings():
                yield page, _ingest_view(page)[1]


def _our_edge_records(page: pymupdf.Page, boxes: list) -> list[dict]:
    table = ruled._table
    settings = table.TableSettings.resolve(settings=ruled._settings())
    paths = page.get_cdrawings()
    snap = (settings.snap_x_tolerance, settings.snap_y_tolerance)
    joined = text_boxes(paths, snap, ruled._CharTest(ruled.char_arrays(page, boxes)))
    return drawing_edges(
        paths, tuple(page.rect), page.number, snap, settings.edge_min_length, joined
    )


@pytest.mark.parametrize(("path", "pages"), RULED_PAGES, ids=lambda v: getattr(v, "stem", ""))
def test_drawing_edges_equal_make_edges_on_every_page(path: Path, pages: tuple) -> None:
    """The edge records built from the signals' drawings equal make_edges' own, record
    for record and in order, on every page of the ruled documents (the joined candidate
    boxes included: they become edges too)."""
    need_corpus(path)
    compared = 0
    for page, boxes in _drawn_pages(path):
        assert _our_edge_records(page, boxes) == _make_edges_records(page, boxes), page.number
        compared += 1
    assert compared >= len(pages)


def test_drawing_edges_equal_make_edges_on_drawn_shapes() -> None:
    """Closed polylines, quads, slanted and zero-length lines, thin rectangles (simulated
    rules), nested and touching boxes (the join), a box past the page's edge (clipped)."""
    pdf = pymupdf.open()
    # make_edges keeps a joined box that holds a character by the character's y in PDF
    # space (mirrored); at this height the cells' text is inside the box either way
    page = pdf.new_page(width=400, height=470)
    outline = [(20, 20), (120, 20), (120, 50), (60, 50), (60, 80), (20, 80)]
    page.draw_polyline(outline, closePath=True)  # MuPDF draws the closing side itself
    page.draw_quad(pymupdf.Quad((150, 20), (250, 20), (150, 90), (250, 90)))
    page.draw_line((20, 100), (200, 160))  # slanted: no edge
    page.draw_line((30, 110), (30, 110))  # a point: no edge
    page.draw_rect((20, 200, 300, 201.5), fill=(0, 0, 0), color=None)  # a rule
    page.draw_rect((20, 210, 21, 300), fill=(0, 0, 0), color=None)
    for k in range(6):  # touching cells grow one joined box
        page.draw_rect((40 + 30 * k, 220, 70 + 30 * k, 250))
    page.draw_rect((60, 230, 65, 240), fill=(1, 0, 0))  # nested
    page.draw_rect((350, 400, 450, 600))  # past the page's edges
    for k in range(4):
        page.insert_text((45 + 30 * k, 240), "ab", fontsize=8)
    boxes = _ingest_view(page)[1]
    ours = _our_edge_records(page, boxes)
    assert ours == _make_edges_records(page, boxes)
    joined = [e for e in ours if (e["x0"], e["x1"], e["top"]) == (40, 220, 220)]
    assert joined  # the top of the six touching cells' joined box (they hold text)


def test_a_closed_path_gains_its_closing_side_as_make_edges_adds_it() -> None:
    """A path flagged ``closePath`` whose first and last items are lines gets the side
    back to its start (MuPDF's own drawings spell that side out, so the paths are given)."""
    table = ruled._table
    settings = table.TableSettings.resolve(settings=ruled._settings())
    pdf = pymupdf.open()
    page = pdf.new_page(width=400, height=500)
    corners = [(20.0, 20.0), (120.0, 20.0), (120.0, 50.0), (60.0, 50.0), (60.0, 80.0)]
    path = {
        "items": [("l", a, b) for a, b in itertools.pairwise([*corners, (20.0, 80.0)])],
        "closePath": True,
        "type": "s",
        "color": (0.0, 0.0, 0.0),
        "fill": None,
        "width": 1.0,
        "rect": (20.0, 20.0, 120.0, 80.0),
    }
    native = {
        **path,
        "rect": pymupdf.Rect(path["rect"]),
        "items": [(k, pymupdf.Point(a), pymupdf.Point(b)) for k, a, b in path["items"]],
    }
    token = table._EDGES_VAR.set([])
    try:
        table.make_edges(page, clip=None, tset=settings, paths=[native])
        theirs = list(table._EDGES_VAR.get())
    finally:
        table._EDGES_VAR.reset(token)
    snap = (settings.snap_x_tolerance, settings.snap_y_tolerance)
    joined = text_boxes([path], snap, lambda rect: False)
    ours = drawing_edges([path], tuple(page.rect), 0, snap, 3, joined)
    assert ours == theirs
    assert [(e["x0"], e["top"], e["x1"], e["bottom"]) for e in ours][-1] == (20, 20, 20, 80)


@pytest.mark.parametrize(("path", "pages"), RULED_PAGES, ids=lambda v: getattr(v, "stem", ""))
def test_merged_edges_equal_the_table_finders_edges(path: Path, pages: tuple) -> None:
    """Snapped, joined and filtered as ``TableFinder.get_edges`` does it: the same values
    of every field the cell search reads, in the same order, on every page."""
    need_corpus(path)
    table = ruled._table
    settings = table.TableSettings.resolve(settings=ruled._settings())
    fields = ("x0", "x1", "top", "bottom", "width", "height", "orientation")
    moved = 0
    for page, boxes in _drawn_pages(path):
        records = _make_edges_records(page, boxes)
        token = table._EDGES_VAR.set(records)
        try:
            finder = table.TableFinder.__new__(table.TableFinder)
            finder.page, finder.settings = page, settings
            theirs = [{k: e[k] for k in fields} for e in finder.get_edges()]
        finally:
            table._EDGES_VAR.reset(token)
        ours = merged_edges(
            _our_edge_records(page, boxes),
            (settings.snap_x_tolerance, settings.snap_y_tolerance),
            (settings.join_x_tolerance, settings.join_y_tolerance),
            settings.edge_min_length,
        )
        assert ours == theirs, page.number
        moved += len(records) != len(ours)
    assert moved  # snapping and joining did change something on these pages


def test_a_page_of_too_many_drawing_items_is_not_searched_for_tables() -> None:
    """One path can hold thousands of short lines (each an edge for the finder): past
    ``MAX_TABLE_PAGE_ITEMS`` the page is read without a ruled search, in bounded time."""
    from core.tables.table_signals import MAX_TABLE_PAGE_ITEMS, page_signals

    for extra, searched in ((100, True), (MAX_TABLE_PAGE_ITEMS + 1, False)):
        pdf, page = _ruled_page(0)
        with pdf:
            marks = page.new_shape()
            for k in range(extra):  # short strokes right of the table, no rulings
                x, y = 480 + (k // 400) * 0.2, 300 + (k % 400) * 1.0
                marks.draw_line((x, y), (x + 1.5, y))
            marks.finish()  # one path
            marks.commit()
            assert len(page.get_cdrawings()) < 100  # the items share few paths
            line_boxes = _ingest_view(page)[0]
            assert bool(page_signals(page, line_boxes)[0]) is searched, extra
