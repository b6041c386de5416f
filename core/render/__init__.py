"""Render: page images, overlays, charts, views and export. Nothing here imports Streamlit.

Modules:

- ``pages``: one PDF page rendered to PNG, cached;
- ``overlay``: character spans as per-line boxes on a page, and the colour palette;
- ``views``: the shapes and text marks the workbench draws for blocks, chunks and spans;
- ``markup``: HTML and SVG for page overlays and marked-up text, escaped;
- ``page_pick``: a rendered page with one policy's chunks as clickable regions;
- ``source_views``: the Source page's views of transcripts and raw HTML bytes;
- ``links``: deep links to the Source view and what their parameters prove;
- ``titles``: titles of chunks for result cards, pickers and charts;
- ``chart_style``: the shared look of the Plotly figures: colours, common layout;
- ``charts``: document lengths and chunk sizes against the model's window;
- ``context_charts``: a document's chunks by how much late-chunking context each had;
- ``rank_charts``: how chunks move between methods, how far apart scores are;
- ``failure_charts``: where the gold ranked and what triage found;
- ``map_chart``: the Map page's figure, one panel per method;
- ``tune_charts``: the Tune page's figure, metric against chunk size per method;
- ``export``: a document's chunks as JSONL in LangChain's or LlamaIndex's shape.
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
