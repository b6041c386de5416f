"""Ruled tables through PyMuPDF's table finder, fed the characters ingest already has.

``page.find_tables()`` spends about four fifths of its time building its own character
list (a second text extraction of the page and a Python loop that wraps every glyph in
``Rect``/``Point``/``Matrix`` objects: 0.1-0.2 s on a dense register page, 10-20x the
page's ``rawdict``). Its ``lines`` strategy reads only where those characters are: a
candidate region of rulings is kept when a character lies inside it (``make_edges``) and
a group of cells when a character overlaps it (``cells_to_tables``). ``ruled_cells``
runs the same steps (``make_edges``, ``TableFinder``) with the same settings as
``find_tables(use_layout=False)``, but on a character list built with plain arithmetic
from the character boxes ingest extracted already, so the page is read once. A rotated
page, or a page without its character boxes, goes through ``find_tables`` itself.

This reaches into ``pymupdf.table``'s module state (``_CHARS_VAR``, ``_EDGES_VAR``,
``make_edges``, ``TableFinder``), so it is tied to the pinned PyMuPDF; when those names
are missing the public ``find_tables`` is used.

Coordinates: character and cell boxes are in the page's unrotated text space (the space
of ``rawdict``), points, y downwards.
"""

from __future__ import annotations

from collections.abc import Sequence

import pymupdf

from core.types import BBox

try:  # the pinned PyMuPDF's table module; a later one may rename its internals
    from pymupdf import table as _table

    _INTERNALS = all(
        hasattr(_table, name)
        for name in ("_CHARS_VAR", "_EDGES_VAR", "make_edges", "TableFinder", "TableSettings")
    )
except ImportError:  # pragma: no cover - the pinned version has it
    _INTERNALS = False

Row = tuple[BBox | None, ...]
# Share of a character's box height cut from its top and from its bottom to approximate
# its ink (see ``_chars``): over the 156 pages of J&J, MGM and GeoTopo this made 7 pages'
# tables differ from find_tables' (in 0.01 pt of an edge, or a table of one or two
# rows), against 10 with the full box.
INK_BAND_SHARE = 0.3


def ruled_cells(page: pymupdf.Page, char_boxes: Sequence[BBox] | None) -> list[list[Row]]:
    """Per table that ``find_tables(use_layout=False)`` finds on ``page``, its rows of cell
    boxes (``None`` for a merged cell). ``char_boxes``: the boxes of the page's visible
    (non-whitespace) characters in unrotated text space; ``None`` lets ``find_tables``
    extract them itself."""
    matrix = page.transformation_matrix
    if char_boxes is None or page.rotation != 0 or matrix.b or matrix.c or not _INTERNALS:
        found = page.find_tables(use_layout=False)
        return [_rows(table) for table in found.tables] if found else []
    return [_rows(table) for table in _finder(page, char_boxes).tables]


def _finder(page: pymupdf.Page, char_boxes: Sequence[BBox]) -> object:
    """``find_tables``' lines-strategy steps over our characters (see the module
    docstring); the table module's state is reset after the call as find_tables does."""
    settings = _table.TableSettings.resolve(settings=_settings())
    chars_token = _table._CHARS_VAR.set(_chars(page, char_boxes))
    edges_token = _table._EDGES_VAR.set([])
    page._table_drawings_cache = []  # one drawings extraction, as find_tables shares it
    old_quad = pymupdf.TOOLS.unset_quad_corrections()
    try:
        page.table_settings = settings
        _table.make_edges(page, clip=None, tset=settings)
        return _table.TableFinder(page, settings=settings)
    finally:
        del page._table_drawings_cache
        pymupdf.TOOLS.unset_quad_corrections(old_quad)
        _table._EDGES_VAR.reset(edges_token)
        _table._CHARS_VAR.reset(chars_token)


def _settings() -> dict[str, object]:
    """``find_tables``' defaults, spelled out (its ``None`` tolerances mean unset)."""
    unset = _table.UNSET
    return {
        "vertical_strategy": "lines",
        "horizontal_strategy": "lines",
        "explicit_vertical_lines": None,
        "explicit_horizontal_lines": None,
        "snap_tolerance": _table.DEFAULT_SNAP_TOLERANCE,
        "snap_x_tolerance": unset,
        "snap_y_tolerance": unset,
        "join_tolerance": _table.DEFAULT_JOIN_TOLERANCE,
        "join_x_tolerance": unset,
        "join_y_tolerance": unset,
        "edge_min_length": 3,
        "min_words_vertical": _table.DEFAULT_MIN_WORDS_VERTICAL,
        "min_words_horizontal": _table.DEFAULT_MIN_WORDS_HORIZONTAL,
        "intersection_tolerance": 3,
        "intersection_x_tolerance": unset,
        "intersection_y_tolerance": unset,
        "text_tolerance": 3,
        "text_x_tolerance": 3,
        "text_y_tolerance": 3,
    }


def _chars(page: pymupdf.Page, char_boxes: Sequence[BBox]) -> list[dict[str, object]]:
    """The fields of find_tables' character records that the lines strategy reads:
    ``x0 top x1 bottom`` (text space) and ``y0 y1`` (the box through the page's
    transformation matrix, as ``make_chars`` computes them), ``text`` one visible
    character."""
    m = page.transformation_matrix  # axis-aligned here: y' = d * y + f
    d, f = m.d, m.f
    out: list[dict[str, object]] = []
    for x0, top, x1, bottom in char_boxes:
        # find_tables' boxes are the glyphs' ink (TEXT_ACCURATE_BBOXES, small glyph
        # heights); ours are the font's full line height. The ink test ("a character
        # inside the region") reads the box's middle band, where the ink of letters is.
        band = INK_BAND_SHARE * (bottom - top)
        ya, yb = d * (top + band) + f, d * (bottom - band) + f
        out.append(
            {
                "x0": x0,
                "x1": x1,
                "top": top,
                "bottom": bottom,
                "y0": min(ya, yb),
                "y1": max(ya, yb),
                "text": "x",
            }
        )
    return out


def _rows(table: object) -> list[Row]:
    return [tuple(_as_box(cell) for cell in row.cells) for row in table.rows]  # type: ignore[attr-defined]


def _as_box(box: object) -> BBox | None:
    if box is None:
        return None
    x0, y0, x1, y1 = box  # type: ignore[misc]
    return (float(x0), float(y0), float(x1), float(y1))
