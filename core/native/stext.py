"""Compiled steps of the PDF reader (``core/native/stext.c``), when built: a page's
text lines, box packing, and the ruled-table finder's edges and cells.

``get_text("rawdict")`` builds one dict per character; most of a first parse's time
went there. ``_stext.page_lines`` walks the same MuPDF text page and returns each line
as a tuple (text, one box per character, bbox, horizontal, font, size, flags) with the
values rawdict gives, so the canonical text and its boxes do not depend on which
reading ran (``tests/test_stext_native.py`` checks every page of the corpus). The
finder's steps (``ruled_cells``, ``table_cells``) follow ``core.tables.ruled`` and
``core.tables.ruled_edges`` in their order of operations, and are tested equal to them.

The module is an optional extension of the package (``setup.py``), built by
``pip install -e .`` (``make`` runs it) against the MuPDF headers and library that ship
inside the installed PyMuPDF wheel. It is used only when it was built for the MuPDF
version PyMuPDF reports; otherwise, when no compiler was there, or with
``CHUNKSCOPE_NATIVE_TEXT=0``, the PDF reader falls back to rawdict and reads exactly the
same text. ``python -m core.native.stext`` says in one line when the fallback is in use,
and why.
"""

from __future__ import annotations

import itertools
import sys
from types import ModuleType

import numpy as np
import pymupdf

from core.native import load_compiled, status_line
from core.provenance.geometry import BBox, union_of

# A line as ``page_lines`` (and ``core.ingest.pdf_lines.raw_line_parts``) gives it:
# (text, one box per character, bbox, runs left to right, font, size, flags)
LineParts = tuple[str, list[BBox], BBox, bool, str, float, int]


def _load() -> tuple[ModuleType | None, str]:
    """The compiled module when it is to be used, else ``None`` and why not (also: built
    for another MuPDF than PyMuPDF's)."""
    module, why_not = load_compiled("_stext")
    if module is None:
        return None, why_not
    built_for = getattr(module, "FZ_VERSION", None)
    if built_for != pymupdf.mupdf_version:
        return None, f"built for MuPDF {built_for}, PyMuPDF has {pymupdf.mupdf_version}"
    return module, ""


_module, _why_not = _load()


def available() -> bool:
    """Whether the compiled reader is in use."""
    return _module is not None


def status() -> str:
    """One line: which reader reads PDFs, and why not the compiled one when it is not."""
    return status_line(_module, _why_not, "PDF reader", "PDFs are read in Python")


def page_lines(textpage: pymupdf.TextPage) -> list[list[LineParts]]:
    """The text blocks of ``textpage`` as lists of line tuples (see the module doc)."""
    if _module is None:
        raise RuntimeError("the compiled text reader is not built")
    context = pymupdf.mupdf.internal_context_get()
    settings = pymupdf._globals  # PyMuPDF's quad and font-name switches, read each page
    return _module.page_lines(
        textpage.this.m_internal_value(),
        int(context.this),
        bool(settings.skip_quad_corrections),
        bool(settings.small_glyph_heights),
        bool(settings.subset_fontnames),
    )


def box_array(lists: list[list[BBox]], dtype: type) -> np.ndarray:
    """The boxes of every list, in order, as an ``(n, 4)`` array of ``dtype`` (float32 or
    float64): packed by the compiled module, else by ``np.fromiter``; the same values."""
    if _module is not None:
        wide = np.dtype(dtype) == np.float64
        packed = _module.box_rows(lists, wide)
        return np.frombuffer(packed, dtype=np.float64 if wide else np.float32).reshape(-1, 4)
    flat = itertools.chain.from_iterable(box for boxes in lists for box in boxes)
    count = 4 * sum(len(boxes) for boxes in lists)
    return np.fromiter(flat, dtype=dtype, count=count).reshape(-1, 4)


def box_bounds(boxes: list[BBox]) -> tuple | None:
    """``core.provenance.geometry.union_of`` of a list of boxes, by the compiled module
    when built."""
    if _module is not None:
        return _module.bounds(boxes)
    found = union_of(boxes)
    return None if found is None else tuple(found)


def table_cells(
    vertical: list[tuple[float, float, float]],
    horizontal: list[tuple[float, float, float]],
    ids: tuple[list[int], list[int]],
    tolerances: tuple[float, float, float],
) -> list[BBox] | None:
    """The table finder's cells from sorted edges (``core.tables.ruled._cell_boxes``
    says how), or ``None`` when the compiled module is not in use or a value is NaN."""
    if _module is None:
        return None
    tol_x, tol_y, slack = tolerances
    return _module.table_cells(vertical, horizontal, ids[0], ids[1], tol_x, tol_y, slack)


def ruled_cells(
    paths: list[dict],
    boxes: list[BBox],
    clip: BBox,
    settings: tuple[float, ...],
) -> list[BBox] | None:
    """The table finder's cells of a page's drawings (``core.tables.ruled._finder`` says
    how), or ``None`` when the compiled module is not in use, a drawing is not in the
    expected shape or a value is NaN. ``settings``: snap x, snap y, join x, join y,
    minimum edge length, intersection x, y tolerances and the bisection slack. The
    snapped positions are averages taken with the interpreter's own ``sum`` (which from
    Python 3.12 adds floats with a compensation term), as the Python steps take them."""
    if _module is None:
        return None
    return _module.ruled_cells(paths, boxes, clip, *settings)


if __name__ == "__main__":
    # after an install: one line when PDFs are read in Python (in use, quiet)
    if _module is None:
        print(status(), file=sys.stderr)
