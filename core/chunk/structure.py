"""The ``structure`` policy: chunks follow the document's blocks and sections.

Rules, in order of precedence:

1. Page headers and footers (blocks of kind ``header``/``footer``) are left out: no
   chunk holds any of their characters, and a chunk never spans across one (running
   headers inside chunks would pollute their vectors). With ``skip_garbled``, so are
   the blocks flagged garbled. Everything else is covered:
   text that no block holds is treated as a paragraph.
2. A heading starts a new chunk. A run of headings with nothing between them
   (``2 Methods`` then ``2.1 Data``) starts one chunk together. A chunk carries as
   ``heading_path`` the section path of the last heading it opens with, else that of
   the innermost heading above its first character (before the first heading: the path
   of the block the chunk starts in).
3. Blocks of a section are packed in order into chunks of at most ``size`` (chars, or
   tokens by ``tokenizer.count``). A block that fits is never split: a list (all its
   items) and a table (all its rows) stay whole when they fit.
4. A block larger than ``size`` is split into units: a list into its items, a table
   into its rows, code into its lines, anything else into its sentences. Units are
   packed like blocks. Consecutive chunks cut from one block at sentence boundaries
   share an overlap: the trailing sentences of the previous chunk that fit in
   ``overlap`` (usually one sentence; none when the last sentence alone is larger).
5. A unit larger than ``size`` (a sentence, item or row) is cut: at whitespace in the
   second half of the limit, else at a safe character cut or a token edge. A piece
   that still cannot fit (one character cluster or token cell larger than ``size``) is
   flagged ``oversize``; no other chunk exceeds ``size``.
6. A claim is not separated from its qualifier: when the next unit starts with a
   qualifier (``However``, ``But``, ``Unless``, ``Except``, ``Although``, ``Note:``...)
   and does not fit, the chunk ends one unit earlier, so the claim opens the next chunk
   with its qualifier, provided the pair fits and the chunk keeps some non-heading text.
7. Transcript turns (blocks of kind ``turn``) are split like paragraphs, at sentence
   boundaries only (never inside the ``"Speaker: "`` prefix), so no turn is cut
   mid-sentence unless one sentence alone exceeds ``size``. A speaker change is the
   preferred boundary: when a turn's next sentence does not fit, and the chunk holds an
   earlier turn before this turn's first sentences, those sentences move to the next
   chunk (if they fit with it), so the chunk ends where the speaker changed.

7. A table split by rule 4 keeps its column headings: every piece carries its table's
   header rows as metadata (``Chunk.header_rows``). With ``table_header_prefix`` the
   encoder also reads them before the piece (``Chunk.encoder_text``), so a piece that
   starts after them is packed to leave room for them (their size plus one).

For ``tokens``, packing uses the document's token cells as an estimate and every
chunk is then checked with ``tokenizer.count``; a chunk that the estimate let through
too large is packed again with real counts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import NamedTuple

from core.chunk.analysis import DocAnalysis
from core.chunk.annotate import BlockIndex
from core.chunk.packing import Unit, cut_unit, pack
from core.chunk.skip import skipped
from core.chunk.spans import Measure, Piece, strip_span
from core.provenance.types import ChunkPolicy

EXCLUDED_KINDS: frozenset[str] = frozenset({"header", "footer"})
QUALIFIER = re.compile(
    r"[\"'(\[\u201c\u2018]?(?:however|but|unless|except|although|though|yet|nevertheless|"
    r"nonetheless|otherwise|instead|still|conversely|notwithstanding|provided that|"
    r"only if|even so|that said|in contrast|on the other hand|note|caveat|warning|"
    r"exception|excluding|with the exception)\b",
    re.IGNORECASE,
)
_ITEM_START = re.compile(
    r"^[ \t]*(?:[-*+\u2022\u25aa\u25e6\u2023\u2013\u25cf\u25a0]|\d{1,3}[.)]|[a-z][.)])[ \t]",
    re.MULTILINE,
)
_LINE = re.compile(r"[^\n\r]+")


class _Segment(NamedTuple):
    """A block (or text between blocks) as the packer sees it; stripped."""

    char_start: int
    char_end: int
    kind: str
    block: int | None
    break_before: bool  # a page header/footer was left out just before it
    qualifier: bool


def structure_pieces(analysis: DocAnalysis, index: BlockIndex, policy: ChunkPolicy) -> list[Piece]:
    measure = Measure(analysis, policy)
    units = _units(analysis, index, measure, policy)
    estimate = measure.estimate
    if policy.table_header_prefix:
        room = _header_room(index, measure)
        groups = pack(
            units, lambda s, e: estimate(s, e) + room(s) <= policy.size, measure, policy.overlap
        )
    else:
        groups = pack(units, lambda s, e: estimate(s, e) <= policy.size, measure, policy.overlap)
    if measure.tokens:
        groups = _repack_oversized(groups, measure, policy.overlap)
    return [_piece(group, measure) for group in groups]


def _header_room(index: BlockIndex, measure: Measure) -> Callable[[int], int]:
    """``position -> room`` the encoder prefix of rule 7 needs for a chunk starting there:
    the size of its table's header rows plus one (the line break), when the position lies
    in a table after its header rows; else 0."""
    spans: list[tuple[int, int, int]] = []  # after the header, table end, room
    for block in index.blocks:
        if block.kind == "table" and block.header_rows:
            first, last = block.header_rows[0][0], block.header_rows[-1][1]
            spans.append((last, block.char_end, measure.size(first, last) + 1))
    starts = [start for start, _, _ in spans]

    def room(position: int) -> int:
        k = bisect.bisect_right(starts, position) - 1
        if k >= 0 and starts[k] <= position < spans[k][1]:
            return spans[k][2]
        return 0

    return room


def _piece(group: list[Unit], measure: Measure) -> Piece:
    """A packed group as a chunk; it carries the last heading of its leading headings."""
    start, end = group[0].char_start, group[-1].char_end
    oversize = len(group) == 1 and group[0].oversize and measure.size(start, end) > measure.limit
    heading_block = group[0].heading_block
    for unit in group:
        if not unit.heading:
            break
        heading_block = unit.heading_block
    return Piece(char_start=start, char_end=end, oversize=oversize, heading_block=heading_block)


def _repack_oversized(groups: list[list[Unit]], measure: Measure, overlap: int) -> list[list[Unit]]:
    """Re-pack, with real token counts, every chunk whose text is larger than the limit."""
    spans = [(g[0].char_start, g[-1].char_end) for g in groups]
    counts = measure.analysis.counts(spans)
    fixed: list[list[Unit]] = []
    for group, count in zip(groups, counts, strict=True):
        if count <= measure.limit or (len(group) == 1 and group[0].oversize):
            fixed.append(group)
            continue
        units: list[Unit] = []
        for unit in group:
            units.extend(cut_unit(unit, measure) if not measure.fits(*_span(unit)) else [unit])
        fixed.extend(pack(units, measure.fits, measure, overlap))
    return fixed


def _span(unit: Unit) -> tuple[int, int]:
    return unit.char_start, unit.char_end


# -- segments and units --------------------------------------------------------------------
def _segments(text: str, index: BlockIndex, policy: ChunkPolicy) -> list[_Segment]:
    """Content in reading order: blocks and the text between them, minus headers/footers
    (and the blocks the policy skips).

    The same for every policy that skips the same blocks, so it is kept on the index.
    """
    key = "structure_segments" + ("_ng" if policy.skip_garbled else "")
    cached = index.derived.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    segments: list[_Segment] = []
    position = 0
    pending_break = False
    for i, block in enumerate(index.blocks):
        start = max(position, block.char_start)
        if start > position:
            pending_break = _add(
                segments, text, (position, start), "paragraph", None, pending_break
            )
        if block.kind in EXCLUDED_KINDS or skipped(block, policy):
            pending_break = pending_break or block.char_end > start
        elif block.char_end > start:
            pending_break = _add(
                segments, text, (start, block.char_end), block.kind, i, pending_break
            )
        position = max(position, block.char_end)
    if position < len(text):
        _add(segments, text, (position, len(text)), "paragraph", None, pending_break)
    index.derived[key] = segments
    return segments


def _add(
    segments: list[_Segment],
    text: str,
    span: tuple[int, int],
    kind: str,
    block: int | None,
    pending_break: bool,
) -> bool:
    """Append the stripped span as a segment; returns the break still pending."""
    start, end = strip_span(text, *span)
    if start >= end:
        return pending_break
    qualifier = QUALIFIER.match(text, start, end) is not None
    segments.append(_Segment(start, end, kind, block, pending_break, qualifier))
    return False


def _units(
    analysis: DocAnalysis, index: BlockIndex, measure: Measure, policy: ChunkPolicy
) -> list[Unit]:
    text = analysis.text
    sentences = analysis.sentences(index)
    sentence_starts = [s for s, _ in sentences]
    units: list[Unit] = []
    section = -1
    heading_block: int | None = None
    previous_heading = False
    for number, segment in enumerate(_segments(text, index, policy)):
        is_heading = segment.kind == "heading"
        opens = not units or (is_heading and not previous_heading)
        if opens:
            section += 1
            heading_block = segment.block if is_heading else None
        elif is_heading:
            heading_block = segment.block
        previous_heading = is_heading
        base = Unit(
            segment.char_start,
            segment.char_end,
            section,
            heading_block,
            heading=is_heading,
            qualifier=segment.qualifier,
            break_before=opens or segment.break_before,
            turn=segment.kind == "turn",
        )
        if measure.estimate(segment.char_start, segment.char_end) <= measure.limit:
            units.append(base)
            continue
        spans = _inner_spans(text, segment, sentences, sentence_starts)
        if segment.kind == "turn" and segment.block is not None:
            spans = _keep_speaker_prefix(spans, index.blocks[segment.block].speaker)
        group = number if segment.kind not in ("list", "table", "code") else None
        units.extend(_split_units(base, spans, group, measure))
    return units


def _with_qualifier(unit: Unit, text: str) -> Unit:
    qualifier = QUALIFIER.match(text, unit.char_start, unit.char_end) is not None
    return unit._replace(qualifier=qualifier) if qualifier != unit.qualifier else unit


def _split_units(
    base: Unit, spans: list[tuple[int, int]], group: int | None, measure: Measure
) -> list[Unit]:
    """Units of one block larger than the limit; the first keeps the block's break."""
    units: list[Unit] = []
    text = measure.text
    for start, end in spans:
        if measure.estimate(start, end) <= measure.limit:
            pieces = [(start, end, False, group)]
        else:
            pieces = [(p.char_start, p.char_end, p.oversize, None) for p in measure.cut(start, end)]
        for piece_start, piece_end, oversize, piece_group in pieces:
            unit = base._replace(
                char_start=piece_start,
                char_end=piece_end,
                group=piece_group,
                oversize=oversize,
                break_before=base.break_before and not units,
            )
            units.append(_with_qualifier(unit, text))
    return units


def _inner_spans(
    text: str, segment: _Segment, sentences: list[tuple[int, int]], sentence_starts: list[int]
) -> list[tuple[int, int]]:
    """A too-large segment as list items, table/code lines or sentences (stripped spans)."""
    start, end = segment.char_start, segment.char_end
    if segment.kind == "list":
        marks = [m.start() for m in _ITEM_START.finditer(text, start, end)]
        if marks:
            bounds = [start, *[m for m in marks if m > start], end]
            return _stripped(text, zip(bounds, bounds[1:], strict=False))
    if segment.kind in ("table", "code"):
        return _stripped(text, (m.span() for m in _LINE.finditer(text, start, end)))
    first = max(0, bisect.bisect_right(sentence_starts, start) - 1)
    last = bisect.bisect_left(sentence_starts, end)
    clipped = ((max(s, start), min(e, end)) for s, e in sentences[first:last])
    spans = _stripped(text, clipped)
    return spans or [(start, end)]


def _keep_speaker_prefix(spans: list[tuple[int, int]], speaker: str) -> list[tuple[int, int]]:
    """Join the first sentences of a turn until one ends past its ``"Speaker: "`` prefix
    (a sentence splitter may cut after ``Dr.`` in ``"Dr. Meyer: ..."``)."""
    if not speaker or not spans:
        return spans
    prefix_end = spans[0][0] + len(speaker) + 2
    k = 0
    while k + 1 < len(spans) and spans[k][1] <= prefix_end:
        k += 1
    return [(spans[0][0], spans[k][1]), *spans[k + 1 :]]


def _stripped(text: str, spans) -> list[tuple[int, int]]:  # spans: Iterable[tuple[int, int]]
    found = []
    for start, end in spans:
        start, end = strip_span(text, start, end)
        if start < end:
            found.append((start, end))
    return found
