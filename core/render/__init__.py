"""Page images and overlays: render pages, light up spans, blocks and chunks.

``pages`` renders PDF pages to PNG (cached); ``overlay`` turns character spans into
per-line boxes and holds the colour palette; ``views`` builds the shapes and text marks the
workbench draws; ``markup`` writes them as escaped SVG/HTML. Nothing here imports streamlit.
"""

from core.render.markup import Mark, Shape, escape, legend_html, marked_text_html, page_html
from core.render.overlay import (
    BLOCK_COLOURS,
    CHUNK_COLOURS,
    HIGHLIGHT_COLOUR,
    OVERLAP_COLOUR,
    ChunkSegment,
    LineBox,
    chunk_segments,
    span_line_boxes,
)
from core.render.pages import DEFAULT_ZOOM, render_page_png

__all__ = [
    "BLOCK_COLOURS",
    "CHUNK_COLOURS",
    "DEFAULT_ZOOM",
    "HIGHLIGHT_COLOUR",
    "OVERLAP_COLOUR",
    "ChunkSegment",
    "LineBox",
    "Mark",
    "Shape",
    "chunk_segments",
    "escape",
    "legend_html",
    "marked_text_html",
    "page_html",
    "render_page_png",
    "span_line_boxes",
]
