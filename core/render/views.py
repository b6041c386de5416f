"""What the workbench draws: shapes and text marks for blocks, chunks and cited spans.

Functions here turn blocks, chunks and spans into ``Shape`` (page overlays, in PDF points,
origin top-left) and ``Mark`` (runs of the canonical text) with their hover text. Chunk
numbers shown to users are 1-based positions in the chunk list.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from core.formats.format_registry import get_format
from core.provenance.geometry import union_of
from core.provenance.types import BBox, Block, Chunk, Document
from core.render.markup import Mark, Shape
from core.render.overlay import (
    BLOCK_COLOURS,
    CHUNK_COLOURS,
    HIGHLIGHT_COLOUR,
    HIGHLIGHT_STROKE,
    OVERLAP_COLOUR,
    ChunkSegment,
    MarginLabel,
    block_box,
    chunk_segments,
    margin_labels,
    overlap_band,
    page_span,
    segment_colour,
    span_line_boxes,
    start_tick,
)

if TYPE_CHECKING:
    from core.chunk import ChunkStats
    from core.store import IndexedDoc

HEADING_SEPARATOR = " › "


def first_words(text: str, n_words: int = 12) -> str:
    """The first ``n_words`` words of ``text`` on one line, with an ellipsis if cut."""
    words = text.split()
    head = " ".join(words[:n_words])
    return head + (" …" if len(words) > n_words else "")


def block_title(block: Block) -> str:
    kind = f"{block.kind} (level {block.level})" if block.kind == "heading" else block.kind
    lines = [kind]
    if block.heading_path:
        lines.append(HEADING_SEPARATOR.join(block.heading_path))
    page = f", p. {block.page}" if block.page else ""
    lines.append(f"chars {block.char_start}-{block.char_end}{page}")
    if block.header_rows:
        first, last = block.header_rows[0][0], block.header_rows[-1][1]
        header = block.text[first - block.char_start : last - block.char_start]
        lines.append(f"header rows ({len(block.header_rows)}): “{first_words(header)}”")
    lines.append(f"“{first_words(block.text)}”")
    return "\n".join(lines)


def block_shapes(
    doc: Document, blocks: Sequence[Block], page: int, kinds: Collection[str]
) -> list[Shape]:
    """One outlined box per block of ``page`` whose kind is in ``kinds``."""
    shapes = []
    for block in blocks:
        if block.page != page or block.kind not in kinds:
            continue
        box = block_box(doc, block)
        if box is None:
            continue
        colour = BLOCK_COLOURS[block.kind]
        shapes.append(
            Shape(
                bbox_pt=box,
                fill=colour,
                stroke=colour,
                fill_opacity=0.16,
                stroke_width_pt=1.0,
                title=block_title(block),
                css_class=f"cs-block cs-kind-{block.kind}",
                data=(("kind", block.kind), ("span", f"{block.char_start}-{block.char_end}")),
            )
        )
    return shapes


def _segment_title(segment: ChunkSegment, chunks: Sequence[Chunk]) -> str:
    if segment.is_overlap:
        names = " & ".join(str(i + 1) for i in segment.chunk_indices)
        size = segment.char_end - segment.char_start
        return f"overlap of chunks {names} ({size} chars)"
    chunk = chunks[segment.chunk_indices[0]]
    lines = [
        f"chunk {segment.chunk_indices[0] + 1}: chars {chunk.char_start}-{chunk.char_end}, "
        f"{chunk.token_count} tokens" + (" (oversize)" if chunk.oversize else "")
    ]
    if chunk.heading_path:
        lines.append(HEADING_SEPARATOR.join(chunk.heading_path))
    if chunk.header_text:
        lines.append(f"table header: “{first_words(chunk.header_text)}”")
    lines.append(f"“{first_words(chunk.text)}”")
    return "\n".join(lines)


def page_chunk_segments(doc: Document, chunks: Sequence[Chunk], page: int) -> list[ChunkSegment]:
    start, end = page_span(doc, page)
    return chunk_segments([(c.char_start, c.char_end) for c in chunks], start, end)


def chunk_shapes(doc: Document, chunks: Sequence[Chunk], page: int) -> list[Shape]:
    """Chunk boundaries on ``page``, drawn so the text under them stays readable.

    Each chunk's lines are tinted in alternating colours; characters shared by two chunks
    (an overlap) get a faint tint and a thin band under each line (``overlap_band``);
    each chunk's number sits in the page margin beside the line where it starts
    (``margin_labels``, never over glyphs), with a tick at its first character. Every
    shape's first ``data`` item is ``("chunks", "<1-based numbers>")``."""
    shapes: list[Shape] = []
    anchors: list[tuple[str, str, BBox]] = []
    for segment in page_chunk_segments(doc, chunks, page):
        colour = segment_colour(segment)
        title = _segment_title(segment, chunks)
        data = (("chunks", " ".join(str(i + 1) for i in segment.chunk_indices)),)
        starters = [i for i in segment.chunk_indices if chunks[i].char_start == segment.char_start]
        lines = span_line_boxes(doc, segment.char_start, segment.char_end, page=page)
        for n, line in enumerate(lines):
            if segment.is_overlap:
                shapes.append(_overlap_band_shape(line.bbox_pt, data))
            shapes.append(
                Shape(
                    bbox_pt=line.bbox_pt, fill=colour, fill_opacity=0.07 if segment.is_overlap
                    else 0.2, stroke=None if segment.is_overlap else colour,
                    stroke_width_pt=0.4, title=title, data=data,
                    css_class="cs-overlap" if segment.is_overlap else "cs-chunk",
                )
            )  # fmt: skip
            if n == 0 and starters:
                first = starters[-1]
                anchors.append((str(first + 1), CHUNK_COLOURS[first % 2], line.bbox_pt))
    glyphs = span_line_boxes(doc, *page_span(doc, page), page=page)
    text_area = union_of(line.bbox_pt for line in glyphs)
    if text_area is not None:
        for label in margin_labels(anchors, text_area, doc.pages[page - 1].width_pt):
            shapes.extend(_label_shapes(label))
    return shapes


def _overlap_band_shape(line: BBox, data: tuple[tuple[str, str], ...]) -> Shape:
    return Shape(
        bbox_pt=overlap_band(line), fill=OVERLAP_COLOUR, fill_opacity=0.85,
        css_class="cs-overlap-band", data=data,
    )  # fmt: skip


def _label_shapes(label: MarginLabel) -> list[Shape]:
    """A margin label (white, outlined in its chunk's colour) and its start tick."""
    numbers = label.numbers or (label.text,)
    data = (("chunks", " ".join(numbers)),)
    one = len(numbers) == 1
    said = (
        f"chunk {label.text} starts on this line"
        if one
        else (f"chunks {label.text} start on these lines")
    )
    ticks = [
        Shape(
            bbox_pt=start_tick(line), fill=label.colour, fill_opacity=0.95,
            css_class="cs-start-tick", data=data,
        )
        for line in label.starts_pt or (label.anchor_pt,)
    ]  # fmt: skip
    return [
        Shape(
            bbox_pt=label.bbox_pt, fill="#ffffff", fill_opacity=0.95, stroke=label.colour,
            stroke_width_pt=1.0, css_class="cs-margin-label", data=data, label=label.text,
            label_size_pt=label.font_pt, title=said,
        ),
        *ticks,
    ]  # fmt: skip


def highlight_shapes(doc: Document, char_start: int, char_end: int, page: int) -> list[Shape]:
    """The cited characters on ``page``: one box per line, tagged with its characters."""
    return [
        Shape(
            bbox_pt=line.bbox_pt,
            fill=HIGHLIGHT_COLOUR,
            stroke=HIGHLIGHT_STROKE,
            fill_opacity=0.45,
            stroke_width_pt=0.9,
            title=f"cited chars {char_start}-{char_end}",
            css_class="cs-hl",
            data=(
                ("chars", f"{line.char_start}-{line.char_end}"),
                ("text", doc.text[line.char_start : line.char_end]),
            ),
        )
        for line in span_line_boxes(doc, char_start, char_end, page=page)
    ]


def focus_view(
    doc: Document, char_start: int, char_end: int, page: int, *, pad_pt: float = 48.0
) -> BBox | None:
    """A full-width strip of ``page`` around the span, at least 40% of the width tall.

    None when the span has no glyph on that page (show the whole page instead).
    """
    lines = span_line_boxes(doc, char_start, char_end, page=page)
    box = union_of(line.bbox_pt for line in lines)
    if box is None:
        return None
    info = doc.pages[page - 1]
    height = max(box[3] - box[1] + 2 * pad_pt, 0.4 * info.width_pt)
    if height >= info.height_pt:
        return None
    centre = (box[1] + box[3]) / 2
    top = min(max(0.0, centre - height / 2), info.height_pt - height)
    return (0.0, top, info.width_pt, top + height)


def chunk_marks(chunks: Sequence[Chunk], window_start: int, window_end: int) -> list[Mark]:
    """Text marks for chunks in a window; a chunk's first run carries ``data-start``."""
    spans = [(c.char_start, c.char_end) for c in chunks]
    marks = []
    for segment in chunk_segments(spans, window_start, window_end):
        first = [i for i in segment.chunk_indices if chunks[i].char_start == segment.char_start]
        data: tuple[tuple[str, str], ...] = (("start", str(first[-1] + 1)),) if first else ()
        marks.append(
            Mark(
                char_start=segment.char_start,
                char_end=segment.char_end,
                css_class="cs-overlap" if segment.is_overlap else "cs-chunk",
                colour=segment_colour(segment),
                title=_segment_title(segment, chunks),
                data=data,
            )
        )
    return marks


def highlight_mark(char_start: int, char_end: int) -> Mark:
    return Mark(
        char_start=char_start,
        char_end=char_end,
        css_class="cs-hl",
        colour=HIGHLIGHT_COLOUR,
        title=f"cited chars {char_start}-{char_end}",
        data=(("chars", f"{char_start}-{char_end}"),),
    )


def context_window(
    doc: Document, char_start: int, char_end: int, chars: int = 600
) -> tuple[int, int]:
    """``[start, end)`` around a span with about ``chars`` of context on each side,
    widened to whitespace so words are not cut."""
    start = max(0, char_start - chars)
    end = min(len(doc.text), char_end + chars)
    while start > 0 and not doc.text[start - 1].isspace() and char_start - start < chars + 40:
        start -= 1
    while end < len(doc.text) and not doc.text[end].isspace() and end - char_end < chars + 40:
        end += 1
    return start, end


def block_marks(
    blocks: Sequence[Block], window_start: int, window_end: int, kinds: Collection[str]
) -> list[Mark]:
    """Text marks for the blocks of ``kinds`` inside a window, coloured by kind.

    Blocks are sorted and clipped so marks never overlap (a parser's overlapping blocks
    show the earlier one).
    """
    marks: list[Mark] = []
    cursor = window_start
    for block in sorted(blocks, key=lambda b: (b.char_start, b.char_end)):
        if block.kind not in kinds or block.char_end <= cursor or block.char_start >= window_end:
            continue
        start = max(block.char_start, cursor)
        end = min(block.char_end, window_end)
        marks.append(
            Mark(
                char_start=start,
                char_end=end,
                css_class="cs-block",
                colour=BLOCK_COLOURS[block.kind],
                title=block_title(block),
                data=(("kind", block.kind),),
            )
        )
        cursor = end
    return marks


def kind_label(doc: Document) -> str:
    """``PDF``, ``Markdown``, ``text``, ...: the display label of the document's format."""
    return get_format(doc.kind).label


def document_row(doc: Document, *, tokens: int, indexed: str, origin: str) -> dict[str, object]:
    """One row of the Library table (``indexed``: yes / older version / no)."""
    return {
        "document": doc.doc_id,
        "kind": kind_label(doc),
        "pages": str(len(doc.pages)) if doc.is_paged else "-",
        "chars": len(doc.text),
        "tokens": tokens,
        "sha256": doc.sha256[:12],
        "no text layer": ", ".join(map(str, doc.pages_without_text)) or "-",
        "indexed": indexed,
        "source": origin,
    }


def stats_items(stats: ChunkStats) -> list[tuple[str, str, str | None]]:
    """``(label, value, detail)`` for each number of a chunking worth showing."""
    n = max(stats.n_chunks, 1)

    def count(value: int) -> tuple[str, str]:
        return f"{value:,}", f"{value / n:.0%} of chunks"

    return [
        ("Chunks", f"{stats.n_chunks:,}", None),
        ("Median tokens", f"{stats.tokens_median:,.0f}", f"max {stats.tokens_max:,}"),
        ("Over the window", f"{stats.share_over_window:.0%}", f"{stats.n_over_window} chunks"),
        ("Overlap", f"{stats.overlap_share:.0%}", "of covered chars"),
        ("Duplicates", f"{stats.duplicate_share:.0%}", "of chunks"),
        ("Cross a page", *count(stats.n_crossing_page)),
        ("Cross a heading", *count(stats.n_crossing_heading)),
        ("Split a sentence", *count(stats.n_splitting_sentence)),
    ]


def stale_note(
    old_sha: str, new_sha: str, n_stale: int, stale_versions: Sequence[IndexedDoc]
) -> str:
    """One line: a re-read document changed, and which stored citations went stale."""
    head = f"changed (sha256 {old_sha[:10]}… → {new_sha[:10]}…)"
    if not n_stale:
        return f"{head}; no stored citation pointed at an old version"
    where = "; ".join(f"{v.n_chunks} in {v.method}/{v.policy_key}" for v in stale_versions)
    return f"{head}: {n_stale} stored chunk citations are now stale ({where}); re-index it"
