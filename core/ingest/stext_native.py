"""Compiled steps of the PDF reader (``core/ingest/stext.c``), when built: a page's
text lines, box packing, and the ruled-table finder's edges and cells.

``get_text("rawdict")`` builds one dict per character; most of a first parse's time
went there. ``_stext.page_lines`` walks the same MuPDF text page and returns each line
as a tuple (text, one box per character, bbox, horizontal, font, size, flags) with the
values rawdict gives, so the canonical text and its boxes do not depend on which
reading ran (``tests/test_stext_native.py`` checks every page of the corpus). The
finder's steps (``ruled_cells``, ``table_cells``) follow ``core.ingest.ruled`` and
``core.ingest.ruled_edges`` in their order of operations, and are tested equal to them.

The module is built against the MuPDF headers and library that ship inside the
installed PyMuPDF wheel (``python -m core.ingest.stext_native``, run by ``make``). It is
used only when it was built for the MuPDF version PyMuPDF reports; otherwise, when no
compiler was there, or with ``CHUNKSCOPE_NATIVE_TEXT=0``, the PDF reader falls back
to rawdict and reads exactly the same text.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import numpy as np
import pymupdf

from core.geometry import BBox, union_of

# A line as ``page_lines`` (and ``core.ingest.pdf_lines.raw_line_parts``) gives it:
# (text, one box per character, bbox, runs left to right, font, size, flags)
LineParts = tuple[str, list[BBox], BBox, bool, str, float, int]

_SOURCE = Path(__file__).with_name("stext.c")
_TARGET = Path(__file__).with_name("_stext" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
_OFF = ("0", "false", "no", "off")


def _load() -> ModuleType | None:
    if os.environ.get("CHUNKSCOPE_NATIVE_TEXT", "1").strip().lower() in _OFF:
        return None
    try:
        from core.ingest import _stext  # type: ignore[attr-defined]
    except ImportError:
        return None
    if getattr(_stext, "FZ_VERSION", None) != pymupdf.mupdf_version:
        return None
    return _stext


_module = _load()


def available() -> bool:
    """Whether the compiled reader is in use."""
    return _module is not None


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
    """``core.geometry.union_of`` of a list of boxes, by the compiled module when built."""
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
    """The table finder's cells from sorted edges (``core.ingest.ruled._cell_boxes``
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
    """The table finder's cells of a page's drawings (``core.ingest.ruled._finder`` says
    how), or ``None`` when the compiled module is not in use, a drawing is not in the
    expected shape or a value is NaN. ``settings``: snap x, snap y, join x, join y,
    minimum edge length, intersection x, y tolerances and the bisection slack. The
    snapped positions are averages summed left to right, as ``sum`` does before Python
    3.12; a later Python sums floats another way, so there the Python steps decide."""
    if _module is None or sys.version_info >= (3, 12):
        return None
    return _module.ruled_cells(paths, boxes, clip, *settings)


def _library() -> Path:
    folder = Path(pymupdf.__file__).parent
    found = sorted(p for p in folder.glob("libmupdf.so*") if "cpp" not in p.name)
    if not found:
        raise FileNotFoundError(f"no libmupdf in {folder}")
    return found[-1]


def build_command(target: Path = _TARGET) -> list[str]:
    """The compiler call that builds ``_stext`` (at ``target``, by default next to this
    file)."""
    library = _library()
    include = library.parent / "mupdf-devel" / "include"
    compiler = os.environ.get("CC", "cc")
    return [
        compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-Wall",
        f"-I{sysconfig.get_paths()['include']}",
        f"-I{include}",
        str(_SOURCE),
        "-o",
        str(target),
        f"-L{library.parent}",
        f"-l:{library.name}",
        f"-Wl,-rpath,{library.parent}",
    ]


def build() -> int:
    """Build the module; 0 when built, 1 (with the reason on stderr) when not."""
    partial = _TARGET.with_name(f".{_TARGET.name}.{os.getpid()}")
    try:
        command = build_command(partial)
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
        os.replace(partial, _TARGET)  # a process that loaded the old one keeps its copy
    except (OSError, subprocess.SubprocessError) as exc:
        partial.unlink(missing_ok=True)
        detail = getattr(exc, "stderr", "") or exc
        print(
            f"chunkscope: compiled text reader not built, rawdict is used ({detail})".strip(),
            file=sys.stderr,
        )
        return 1
    print(f"chunkscope: built {_TARGET.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(build())
