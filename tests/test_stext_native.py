"""The compiled text reader (``core.native.stext``) reads what rawdict reads.

Line by line on every page of every shared corpus PDF (under PyMuPDF's quad and
font-name switches as set and with all three turned the other way), document by document
(text, character boxes, pages, lines) against the rawdict reading, and the box packing
against ``np.fromiter``. Where a C compiler and the MuPDF headers of the PyMuPDF wheel
are present (as where ``make`` runs), the reader must have been built.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from core.formats import load_document
from core.ingest.pdf_lines import raw_line_parts
from core.ingest.pdf_text import RAWDICT_FLAGS
from core.native import stext as stext_native
from core.tables.finder import clear_table_cache
from tests.conftest import CORPUS, PDF_PASSWORDS, corpus_files, need_corpus

CORPUS_PDFS = corpus_files(CORPUS, "**/*.pdf")  # every PDF of the shared corpus, or it fails
built = pytest.mark.skipif(not stext_native.available(), reason="compiled text reader not built")


def _openable(path: Path) -> pymupdf.Document | None:
    try:
        pdf = pymupdf.open(path)
    except Exception:  # the corpus holds broken and empty files on purpose
        return None
    if pdf.needs_pass and not pdf.authenticate(PDF_PASSWORDS.get(path.name, "")):
        return None
    return pdf if pdf.page_count else None


def _rawdict_blocks(page: pymupdf.Page, textpage: pymupdf.TextPage) -> list[list[tuple]]:
    raw = page.get_text("rawdict", flags=RAWDICT_FLAGS, textpage=textpage)
    blocks = []
    for block in raw["blocks"]:
        if block.get("type") != 0:
            continue
        lines = [p for p in (raw_line_parts(line) for line in block["lines"]) if p is not None]
        if lines:
            blocks.append(lines)
    return blocks


def _differences(path: Path) -> Iterator[str]:
    pdf = _openable(path)
    if pdf is None:
        return
    with pdf:
        for page in pdf:
            textpage = page.get_textpage(flags=RAWDICT_FLAGS)
            if stext_native.page_lines(textpage) != _rawdict_blocks(page, textpage):
                yield f"{path.name} p. {page.number + 1}"


@pytest.fixture
def switched() -> Iterator[None]:
    """PyMuPDF's quad corrections, small glyph heights and subset font names turned the
    other way for the test, then put back."""
    g = pymupdf._globals
    before = (g.skip_quad_corrections, g.small_glyph_heights, g.subset_fontnames)
    pymupdf.TOOLS.unset_quad_corrections(not before[0])
    pymupdf.TOOLS.set_small_glyph_heights(not before[1])
    pymupdf.TOOLS.set_subset_fontnames(not before[2])
    try:
        yield
    finally:
        pymupdf.TOOLS.unset_quad_corrections(before[0])
        pymupdf.TOOLS.set_small_glyph_heights(before[1])
        pymupdf.TOOLS.set_subset_fontnames(before[2])


def test_the_reader_is_built_where_it_can_be() -> None:
    headers = Path(pymupdf.__file__).parent / "mupdf-devel" / "include" / "mupdf" / "fitz.h"
    python_h = Path(sysconfig.get_paths()["include"]) / "Python.h"
    switch = os.environ.get("CHUNKSCOPE_NATIVE_TEXT", "1").strip().lower()
    off = switch in ("0", "false", "no", "off")
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if off or not headers.is_file() or not python_h.is_file() or compiler is None:
        pytest.skip("no compiler, Python or MuPDF headers here, or the reader is switched off")
    assert stext_native.available(), stext_native.status()


@built
def test_every_corpus_page_reads_as_rawdict_reads_it() -> None:
    pages = 0
    for path in CORPUS_PDFS:
        assert list(_differences(path)) == []
        pdf = _openable(path)
        pages += pdf.page_count if pdf else 0
    assert pages > 300


@built
def test_pages_read_alike_with_pymupdfs_switches_turned(switched: None) -> None:
    for path in CORPUS_PDFS[:: max(1, len(CORPUS_PDFS) // 8)]:
        assert list(_differences(path)) == []


def _document_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    clear_table_cache()
    native = load_document(path)
    with monkeypatch.context() as patch:
        patch.setattr(stext_native, "_module", None)
        assert not stext_native.available()
        clear_table_cache()
        fallback = load_document(path)
    return native, fallback


@built
@pytest.mark.parametrize(
    "name",
    ["Pfizer_2023Q2_10Q.pdf", "plumber_WARN-Report-for-7-1-2015-to-03-25-2016.pdf"],
)
def test_a_document_is_the_same_either_way(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    found = [p for p in CORPUS_PDFS if p.name == name]
    if not found:
        need_corpus(CORPUS / name)  # fails where SOURCES.md lists it, else skips
    native, fallback = _document_both_ways(found[0], monkeypatch)
    assert native.text == fallback.text
    assert native.pages == fallback.pages and native.lines == fallback.lines
    assert np.array_equal(native.char_page, fallback.char_page)
    assert np.array_equal(native.char_bbox_pt, fallback.char_bbox_pt, equal_nan=True)


@built
def test_a_generated_pdf_with_odd_spaces_rotation_and_edges_reads_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdf = pymupdf.open()
    for rotation in (0, 90):
        page = pdf.new_page(width=300, height=400)
        page.insert_text((20, 40), "ﬁnal ﬂow  two\u00a0spaces\tand a tab", fontsize=11)
        page.insert_text((250, 80), "runs off the page edge", fontsize=11)
        page.insert_text((20, 120), "exam-", fontsize=11)
        page.insert_text((20, 134), "ple", fontsize=11)
        page.set_rotation(rotation)
    path = tmp_path / "edges.pdf"
    pdf.save(path)
    native, fallback = _document_both_ways(path, monkeypatch)
    assert native.text == fallback.text and "example" in native.text
    assert np.array_equal(native.char_bbox_pt, fallback.char_bbox_pt, equal_nan=True)


def test_boxes_pack_as_fromiter_packs_them() -> None:
    rng = random.Random(7)
    nan = (math.nan,) * 4
    lists = [
        [
            nan if rng.random() < 0.1 else tuple(rng.uniform(-1e4, 1e4) for _ in range(4))
            for _ in range(rng.randrange(0, 40))
        ]
        for _ in range(30)
    ] + [[]]
    flat = [v for boxes in lists for box in boxes for v in box]
    for dtype in (np.float32, np.float64):
        expected = np.fromiter(flat, dtype=dtype, count=len(flat)).reshape(-1, 4)
        got = stext_native.box_array(lists, dtype)
        assert got.dtype == dtype and got.flags.writeable
        assert np.array_equal(got, expected, equal_nan=True)


@built
def test_box_packing_refuses_what_is_not_a_box() -> None:
    with pytest.raises(TypeError):
        stext_native.box_array([[(1.0, 2.0, 3.0)]], np.float32)
    with pytest.raises(TypeError):
        stext_native.box_array([[("a", 2.0, 3.0, 4.0)]], np.float32)


def _random_edges(rng: random.Random) -> list[dict]:
    """Ruling edges as the finder's records: a jittered grid, some edges repeated, cut
    short or missing, stray ones, on a coarse lattice so that ties and shared boxes
    happen."""
    edges = []
    xs = sorted({rng.randrange(0, 12) * 7.5 for _ in range(rng.randrange(2, 9))})
    ys = sorted({rng.randrange(0, 12) * 6.0 for _ in range(rng.randrange(2, 9))})
    for _ in range(rng.randrange(0, 3 * (len(xs) + len(ys)) + 4)):
        if rng.random() < 0.5:
            x = rng.choice(xs) + rng.choice([0.0, 0.0, -0.0, 0.5, 3.0])
            top, bottom = sorted(rng.sample(ys, 2) if len(ys) > 1 else [ys[0], ys[0] + 6])
            edges.append({"x0": x, "x1": x, "top": top, "bottom": bottom, "orientation": "v"})
        else:
            y = rng.choice(ys) + rng.choice([0.0, 0.0, -0.0, 0.5, 3.0])
            x0, x1 = sorted(rng.sample(xs, 2) if len(xs) > 1 else [xs[0], xs[0] + 7.5])
            edges.append({"x0": x0, "x1": x1, "top": y, "bottom": y, "orientation": "h"})
    edges += rng.sample(edges, min(len(edges), rng.randrange(0, 4)))  # drawn twice
    rng.shuffle(edges)
    return edges


@built
def test_table_cells_are_the_finders_cells() -> None:
    from core.tables import ruled

    rng = random.Random(5)
    cases = 0
    for _ in range(600):
        edges = _random_edges(rng)
        tol = rng.choice([(3.0, 3.0), (0.0, 0.0), (1.0, 2.5)])
        expected = ruled._cells(ruled._intersections(edges, *tol))
        assert ruled._cell_boxes(edges, *tol) == expected
        cases += bool(expected)
    assert cases > 300  # most cases hold cells


@built
def test_table_cells_leave_nan_to_the_python_steps() -> None:
    from core.tables import ruled

    nan = math.nan
    edges = [
        {"x0": nan, "x1": nan, "top": 0.0, "bottom": 10.0, "orientation": "v"},
        {"x0": 0.0, "x1": 10.0, "top": 0.0, "bottom": 0.0, "orientation": "h"},
    ]
    assert (
        stext_native.table_cells(
            [(nan, 0.0, 10.0)], [(0.0, 0.0, 10.0)], ([0], [0]), (3.0, 3.0, 1e-6)
        )
        is None
    )
    assert ruled._cell_boxes(edges, 3.0, 3.0) == ruled._cells(ruled._intersections(edges, 3.0, 3.0))


def _finder_settings() -> tuple:
    from core.tables import ruled

    s = ruled._table.TableSettings.resolve(settings=ruled._settings())
    snap = (s.snap_x_tolerance, s.snap_y_tolerance)
    join = (s.join_x_tolerance, s.join_y_tolerance)
    tol = (s.intersection_x_tolerance, s.intersection_y_tolerance)
    return snap, join, s.edge_min_length, tol


def _python_cells(paths: list[dict], rect: tuple, number: int, holds) -> list:  # noqa: ANN001
    from core.tables import ruled
    from core.tables.ruled_edges import drawing_edges, merged_edges, text_boxes

    snap, join, min_length, tol = _finder_settings()
    edges = drawing_edges(paths, rect, number, snap, min_length, text_boxes(paths, snap, holds))
    return ruled._cells(ruled._intersections(merged_edges(edges, snap, join, min_length), *tol))


def _compiled_cells(paths: list[dict], rect: tuple, holds) -> list | None:  # noqa: ANN001
    from core.tables import ruled
    from core.tables.ruled_edges import text_boxes

    snap, join, min_length, tol = _finder_settings()
    boxes = text_boxes(paths, snap, holds)
    return stext_native.ruled_cells(
        list(paths), boxes, rect, (*snap, *join, min_length, *tol, ruled._SLACK)
    )


@built
def test_the_compiled_finder_steps_give_the_python_steps_cells_on_every_drawn_page() -> None:
    from core.ingest.pdf_lines import visible_char_boxes
    from core.ingest.pdf_text import _page_blocks
    from core.tables import ruled

    pages = with_cells = 0
    for path in CORPUS_PDFS:
        pdf = _openable(path)
        if pdf is None:
            continue
        with pdf:
            for page in pdf:
                paths = page.get_cdrawings()
                if page.rotation or not paths or len(paths) > 2000:
                    continue
                boxes = visible_char_boxes(_page_blocks(page, path.name))
                holds = ruled._CharTest(ruled.char_arrays(page, boxes))
                rect = tuple(page.rect)
                expected = _python_cells(paths, rect, page.number, holds)
                assert _compiled_cells(paths, rect, holds) == expected, (path.name, page.number)
                pages += 1
                with_cells += bool(expected)
    assert pages > 250 and with_cells > 150


def _random_paths(rng: random.Random) -> list[dict]:
    """Drawings as ``get_cdrawings`` gives them: lines, rectangles (thin ones too),
    quads and curves on a coarse lattice, closed paths, some past the page's edge."""

    def pt() -> tuple[float, float]:
        return (
            rng.randrange(-2, 14) * 7.5 + rng.choice([0.0, 0.0, 0.4, 2.0]),
            rng.randrange(-2, 14) * 6.0 + rng.choice([0.0, 0.0, 0.4, 2.0]),
        )

    paths = []
    for _ in range(rng.randrange(0, 25)):
        items = []
        for _ in range(rng.randrange(1, 5)):
            kind = rng.choice(["l", "l", "re", "re", "qu", "c"])
            if kind == "l":
                a = pt()
                b = rng.choice([(a[0], pt()[1]), (pt()[0], a[1]), pt()])
                items.append(("l", a, b))
            elif kind == "re":
                (x0, y0), (x1, y1) = pt(), pt()
                if rng.random() < 0.3:
                    y1 = y0 + rng.choice([0.5, 1.0, 3.0])
                items.append(("re", (x0, y0, x1, y1), 1))
            elif kind == "qu":
                items.append(("qu", (pt(), pt(), pt(), pt())))
            else:
                items.append(("c", pt(), pt(), pt(), pt()))
        corners = [
            p
            for it in items
            for p in (
                [it[1][:2], it[1][2:]] if it[0] == "re" else it[1] if it[0] == "qu" else it[1:]
            )
        ]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        rect = (min(xs), min(ys), max(xs), max(ys))
        paths.append({"items": items, "closePath": rng.choice([True, False, None]), "rect": rect})
    return paths


@built
def test_the_compiled_finder_steps_give_the_python_steps_cells_on_random_drawings() -> None:
    rng = random.Random(9)
    page_rect = (0.0, 0.0, 90.0, 72.0)
    with_cells = 0
    for case in range(500):
        paths = _random_paths(rng)
        # the joined boxes a character lies in: every one, or those starting at an even x
        holds = (lambda box: True) if case % 2 else (lambda box: int(box[0]) % 2 == 0)
        expected = _python_cells(paths, page_rect, 0, holds)
        assert _compiled_cells(paths, page_rect, holds) == expected
        with_cells += bool(expected)
    assert with_cells > 100


@built
def test_the_compiled_finder_steps_leave_odd_drawings_to_python() -> None:
    nan = math.nan
    for items in ([("l", (nan, 0.0), (10.0, 0.0))], [("re", (0.0, 0.0, 10.0), 1)], ["l"]):
        paths = [{"items": items, "closePath": False, "rect": (0.0, 0.0, 10.0, 10.0)}]
        assert _compiled_cells(paths, (0.0, 0.0, 100.0, 100.0), lambda box: True) is None
