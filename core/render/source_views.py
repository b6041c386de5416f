"""HTML of the Source page's views for reflowable formats with more than offsets:

* ``transcript_html``: the turns around a cited span, each with its time range and
  speaker, the cited characters lit;
* ``raw_source_html``: the exact byte range of the raw file (HTML) that the cited
  characters came from, lit inside its surrounding source, tags and references as
  written.

Every document string goes through ``core.render.markup.escape`` (or
``marked_text_html``, which escapes); the result holds no script.
"""

from __future__ import annotations

import bisect

from core.provenance.cite import clock_range
from core.provenance.types import Document
from core.render.markup import escape, marked_text_html
from core.render.views import highlight_mark


def cited_turns(doc: Document, char_start: int, char_end: int, around: int = 2) -> range:
    """Indices into ``doc.lines`` (one per turn) of the turns a span touches, with
    ``around`` more on each side."""
    starts = [line.char_start for line in doc.lines]
    first = max(0, bisect.bisect_right(starts, char_start) - 1)
    last = max(first, bisect.bisect_left(starts, max(char_end, char_start + 1)) - 1)
    return range(max(0, first - around), min(len(doc.lines), last + 1 + around))


def transcript_html(doc: Document, char_start: int, char_end: int, around: int = 2) -> str:
    """A table of turns (time range, speaker, text) with the cited characters lit."""
    rows = []
    cue_starts = [c.char_start for c in doc.cues]
    mark = highlight_mark(char_start, char_end)
    for k in cited_turns(doc, char_start, char_end, around):
        line = doc.lines[k]
        time = doc.time_range(line.char_start, line.char_end)
        when = clock_range(*time) if time else "-"
        cue = bisect.bisect_left(cue_starts, line.char_start)
        speaker = doc.cues[cue].speaker if cue < len(doc.cues) else ""
        cited = line.char_start < char_end and char_start < line.char_end
        text = doc.text[line.char_start : line.char_end]
        body = marked_text_html(text, line.char_start, [mark], css_class="cs-text cs-turn-text")
        rows.append(
            f'<tr class="cs-turn{" cs-turn-cited" if cited else ""}">'
            f'<td class="cs-turn-time">{escape(when)}</td>'
            f'<td class="cs-turn-speaker">{escape(speaker or "-")}</td>'
            f"<td>{body}</td></tr>"
        )
    head = "<tr><th>time</th><th>speaker</th><th>turn</th></tr>"
    return f'<table class="cs-turns">{head}{"".join(rows)}</table>'


def _char_boundary(data: bytes, offset: int, step: int) -> int:
    """Move ``offset`` by ``step`` (-1 or +1) until it sits on a UTF-8 character start."""
    while 0 < offset < len(data) and (data[offset] & 0xC0) == 0x80:
        offset += step
    return offset


def raw_source_html(doc: Document, char_start: int, char_end: int, context: int = 300) -> str:
    """The raw bytes ``doc.raw_range`` of the span, lit, with ``context`` bytes around
    (cut at UTF-8 character starts); a note when the span maps to no raw bytes."""
    found = doc.raw_range(char_start, char_end)
    data = doc.source_bytes
    if found is None or data is None:
        return '<div class="cs-raw-none">These characters were inserted; no raw bytes.</div>'
    a, b = found
    lo = _char_boundary(data, max(0, a - context), -1)
    hi = _char_boundary(data, min(len(data), b + context), +1)
    before, cited, after = (
        data[lo:a].decode("utf-8", "replace"),
        data[a:b].decode("utf-8", "replace"),
        data[b:hi].decode("utf-8", "replace"),
    )
    return (
        f'<div class="cs-text cs-raw">{escape(before)}'
        f'<mark class="cs-hl" title="raw bytes {a}-{b}">{escape(cited)}</mark>'
        f"{escape(after)}</div>"
    )
