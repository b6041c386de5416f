"""Building blocks shared by the parsers: trimmed spans, boxes and heading paths.

Every parser hands back candidate spans; ``make_block`` trims whitespace at both ends
(so a block starts and ends on a visible character) and slices ``doc.text`` for the
block's text, which is how ``doc.text[char_start:char_end] == block.text`` holds by
construction. ``finish`` sorts, checks that blocks do not overlap, and fills heading
paths.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from core.parse.garbled import garbled
from core.provenance.geometry import union_of
from core.provenance.types import BBox, Block, BlockKind, Document, TextLine

_SPACE_RUN = re.compile(r"\s+")


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def make_block(
    doc: Document,
    kind: BlockKind,
    start: int,
    end: int,
    *,
    page: int = 0,
    bbox: BBox | None = None,
    level: int = 0,
    header_rows: tuple[tuple[int, int], ...] = (),
) -> Block | None:
    """A block over the trimmed span, or ``None`` when the span is only whitespace.

    ``header_rows`` (a table's heading rows) are trimmed too and clipped to the block."""
    start, end = trim_span(doc.text, start, end)
    if start >= end:
        return None
    rows: list[tuple[int, int]] = []
    for row_start, row_end in header_rows:
        row_start, row_end = trim_span(doc.text, max(row_start, start), min(row_end, end))
        if row_start < row_end and (not rows or row_start >= rows[-1][1]):
            rows.append((row_start, row_end))
    return Block(
        doc_id=doc.doc_id,
        doc_sha256=doc.sha256,
        kind=kind,
        char_start=start,
        char_end=end,
        text=doc.text[start:end],
        page=page,
        bbox_pt=bbox,
        level=level if kind == "heading" else 0,
        header_rows=tuple(rows) if kind == "table" else (),
    )


def lines_bbox(lines: Iterable[TextLine]) -> BBox | None:
    """Union of the boxes of the lines on the first boxed line's page (points, page
    space); ``None`` when no line has a box."""
    boxed = [(line.page, line.bbox_pt) for line in lines if line.bbox_pt is not None]
    if not boxed:
        return None
    page = boxed[0][0]
    return union_of(box for line_page, box in boxed if line_page == page)


def heading_title(text: str) -> str:
    """A heading's text as a breadcrumb entry: Markdown markers dropped, whitespace folded."""
    first = text.strip()
    if first.startswith("#"):
        first = first.lstrip("#").rstrip("#").strip()
    else:
        lines = first.split("\n")
        if len(lines) > 1 and set(lines[-1].strip()) <= {"=", "-"}:
            first = "\n".join(lines[:-1])
    return _SPACE_RUN.sub(" ", first).strip()


def finish(blocks: Iterable[Block | None]) -> tuple[Block, ...]:
    """Sort by span, check they do not overlap, and fill ``heading_path``.

    A heading's own path ends with its title; every other block's path is the titles
    of the headings that enclose it (a heading of level L closes every open heading of
    level >= L). Header and footer blocks are page furniture and get no path. A block
    whose text is not language is flagged ``garbled`` (``core.parse.garbled``).
    """
    ordered = sorted((b for b in blocks if b is not None), key=lambda b: b.char_start)
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.char_start < before.char_end:
            raise ValueError(
                f"blocks overlap: [{before.char_start}, {before.char_end}) and "
                f"[{after.char_start}, {after.char_end})"
            )
    out: list[Block] = []
    stack: list[tuple[int, str]] = []
    open_path: tuple[str, ...] = ()  # the titles of ``stack``
    for block in ordered:
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, heading_title(block.text)))
            open_path = tuple(title for _, title in stack)
            path = open_path
        elif block.kind in ("header", "footer"):
            path = ()
        else:
            path = open_path
        changes: dict[str, object] = {"heading_path": path} if path else {}
        if garbled(block.text):
            changes["garbled"] = True
        out.append(dataclasses.replace(block, **changes) if changes else block)  # type: ignore[arg-type]
    return tuple(out)
