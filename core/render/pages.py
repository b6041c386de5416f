"""Page images: one PDF page rendered to PNG bytes, cached by (sha256, page, zoom).

The image covers the page as rendered by PyMuPDF (rotation applied), so a box in PDF
points with the origin at the page's top-left corner maps to pixels by multiplying by
``zoom`` (1 pt = ``zoom`` px). Rendering happens from ``Document.pdf_bytes``, which ingest
stores decrypted, so no password is needed here.

A page is never rendered past ``MAX_SIDE_PX`` pixels a side or ``MAX_PIXELS`` in all
(give or take the rounding of its sides; a 14,400-pt page at 2x would be 28,800 px
square, past what MuPDF allocates): its zoom is lowered until it fits (``fitted_zoom``).
The image is still drawn at the page's size in points, so the overlays, which are
placed in points, stay where they belong.
"""

from __future__ import annotations

import pymupdf

from core.bounded_cache import BoundedCache
from core.ingest.pdf_guard import mupdf_errors
from core.provenance.types import Document

DEFAULT_ZOOM = 2.0
MAX_SIDE_PX = 8000
MAX_PIXELS = 24_000_000
_MAX_CACHED_IMAGES = 96
_cache: BoundedCache[tuple[str, int, float], bytes] = BoundedCache(_MAX_CACHED_IMAGES)


def _check_page(doc: Document, page: int) -> None:
    if not doc.is_paged or doc.pdf_bytes is None:
        raise ValueError(f"{doc.doc_id} is reflowable text: it has no pages to render")
    if not 1 <= page <= len(doc.pages):
        raise ValueError(f"{doc.doc_id} has pages 1-{len(doc.pages)}, not {page}")


def fitted_zoom(width_pt: float, height_pt: float, zoom: float) -> float:
    """``zoom``, lowered so that the page fits ``MAX_SIDE_PX`` and ``MAX_PIXELS``."""
    side = max(width_pt, height_pt, 1.0)
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    return min(zoom, MAX_SIDE_PX / side, (MAX_PIXELS / area) ** 0.5)


def render_page_png(doc: Document, page: int, zoom: float = DEFAULT_ZOOM) -> bytes:
    """PNG of 1-based ``page`` at ``zoom`` pixels per point (2.0 stays sharp on HiDPI),
    or fewer for a page too large for that (``fitted_zoom``)."""
    _check_page(doc, page)
    info = doc.pages[page - 1]
    zoom = fitted_zoom(info.width_pt, info.height_pt, zoom)
    return _cache.get_or_compute((doc.sha256, page, float(zoom)), lambda: _png(doc, page, zoom))


def _png(doc: Document, page: int, zoom: float) -> bytes:
    """PNG of 1-based ``page`` at exactly ``zoom`` pixels per point (not cached)."""
    assert doc.pdf_bytes is not None
    with mupdf_errors(doc.doc_id), pymupdf.open(stream=doc.pdf_bytes, filetype="pdf") as pdf:
        pixmap = pdf[page - 1].get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        return pixmap.tobytes("png")


def clear_page_cache() -> None:
    _cache.clear()


def cached_page_count() -> int:
    """How many page images the cache holds (for tests and the sidebar's cache line)."""
    return len(_cache)
