"""The ``fixed`` policy: windows of ``size`` characters or tokens with ``overlap``.

A structure-blind baseline: it ignores blocks and sentences, so it cuts words, sentences
and tables wherever the window ends; the statistics show how often.

Characters (``unit="chars"``). A window starts at a non-whitespace character and spans
``size`` code points; its end moves back to the nearest safe cut (never inside a
character cluster such as ``e`` + combining accent or an emoji ZWJ sequence); the chunk
is the window without trailing whitespace. The next window starts ``overlap`` characters
before the previous chunk's end (moved back to a safe cut, then forward past
whitespace). When only whitespace would be shared (a long blank run), the next window
starts at the next non-whitespace character instead.

Tokens (``unit="tokens"``). The text is cut into token cells (see ``analysis``); a
window is ``size`` tokens' worth of whole cells, so its edges are token edges, and the
chunk is the window without surrounding whitespace. Because a chunk's text re-tokenized
on its own can count more tokens than the document tokens it holds (a word cut in the
middle), each window is checked with ``tokenizer.count`` and shrunk by one cell at a time
until it fits. The next window starts at the first cell that leaves at most ``overlap``
tokens shared with the previous window.

Either way, a chunk is flagged ``oversize`` only when one character cluster or one token
cell alone is larger than ``size``. With ``skip_garbled`` the windows run region by region
between the garbled blocks (``skip.kept_regions``), so no window reaches into one.
"""

from __future__ import annotations

import bisect

from core.chunk.analysis import DocAnalysis
from core.chunk.annotate import BlockIndex
from core.chunk.skip import kept_regions
from core.chunk.spans import Piece, safe_cut_after, safe_cut_before, skip_space, strip_span
from core.provenance.types import ChunkPolicy


def fixed_pieces(analysis: DocAnalysis, index: BlockIndex, policy: ChunkPolicy) -> list[Piece]:
    pieces: list[Piece] = []
    for lo, hi in kept_regions(len(analysis.text), index, policy):
        if policy.unit == "tokens":
            pieces.extend(_token_windows(analysis, policy.size, policy.overlap, lo, hi))
        else:
            pieces.extend(_char_windows(analysis.text, policy.size, policy.overlap, lo, hi))
    return pieces


def _char_windows(text: str, size: int, overlap: int, lo: int, n: int) -> list[Piece]:
    """Windows over ``text[lo:n]``."""
    pieces: list[Piece] = []
    position = skip_space(text, lo)
    while position < n:
        window_end = min(position + size, n)
        if window_end < n:
            cut = safe_cut_before(text, window_end, position + 1)
            window_end = cut if cut is not None else min(safe_cut_after(text, position + 1), n)
        start, end = strip_span(text, position, window_end)
        pieces.append(Piece(char_start=start, char_end=end, oversize=end - start > size))
        following = min(skip_space(text, window_end), n)
        if following >= n:
            break
        position = _next_char_start(text, position, end, overlap, size, following)
    return pieces


def _next_char_start(
    text: str, start: int, end: int, overlap: int, size: int, following: int
) -> int:
    """Where the window after chunk ``[start, end)`` begins (see the module doc)."""
    if overlap == 0:
        return following
    wanted = max(end - overlap, start + 1)
    cut = safe_cut_before(text, wanted, start + 1)
    position = skip_space(text, cut if cut is not None else safe_cut_after(text, wanted))
    if following >= position + size or position >= following:
        return following
    return position


def _token_windows(analysis: DocAnalysis, size: int, overlap: int, lo: int, hi: int) -> list[Piece]:
    """Windows of whole cells over ``text[lo:hi]``: the cells that start in it, the first
    widened back to ``lo`` and the last clipped at ``hi`` (the whole text: all cells)."""
    text = analysis.text
    cells = Cells(analysis, lo, hi)
    if cells.first >= cells.last:  # no cell starts here: the region is part of one, uncut
        start, end = strip_span(text, lo, hi)
        if start >= end:
            return []
        return [Piece(char_start=start, char_end=end, oversize=analysis.count(start, end) > size)]
    analysis.counts(_greedy_spans(cells, size, overlap))  # one batch for the usual case
    pieces: list[Piece] = []
    first = cells.first
    while first < cells.last:
        last = cells.window_end(first, size)
        while True:
            start, end = cells.span(first, last)
            fits = analysis.count(start, end) <= size
            if fits or last == first + 1:
                break
            last -= 1
        if start < end:
            pieces.append(Piece(char_start=start, char_end=end, oversize=not fits))
        if last >= cells.last:
            break
        first = cells.next_first(first, last, overlap)
    return pieces


class Cells:
    """The token cells of one region ``[lo, hi)``: cell numbers ``[first, last)``."""

    def __init__(self, analysis: DocAnalysis, lo: int, hi: int) -> None:
        self.analysis, self.lo, self.hi = analysis, lo, hi
        starts = analysis.cell_starts
        whole = lo == 0 and hi == len(analysis.text)
        self.first = 0 if whole else bisect.bisect_left(starts, lo)
        self.last = len(starts) if whole else bisect.bisect_left(starts, hi)

    def window_end(self, first: int, size: int) -> int:
        """The largest ``last`` such that cells ``[first, last)`` hold at most ``size``
        tokens (at least one cell)."""
        totals = self.analysis.cell_tokens
        last = bisect.bisect_right(totals, totals[first] + size) - 1
        return min(max(last, first + 1), self.last)

    def next_first(self, first: int, last: int, overlap: int) -> int:
        """First cell of the next window: at most ``overlap`` tokens shared, always
        progress."""
        if not overlap:
            return last
        totals = self.analysis.cell_tokens
        return max(bisect.bisect_left(totals, totals[last] - overlap), first + 1)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The stripped characters of cells ``[first, last)``, kept inside the region."""
        analysis = self.analysis
        start = self.lo if first == self.first else analysis.cell_start(first)
        end = self.hi if last == self.last else min(analysis.cell_end(last - 1), self.hi)
        return strip_span(analysis.text, start, end)


def _greedy_spans(cells: Cells, size: int, overlap: int) -> list[tuple[int, int]]:
    """The windows as they are when no window needs shrinking."""
    spans = []
    first = cells.first
    while first < cells.last:
        last = cells.window_end(first, size)
        spans.append(cells.span(first, last))
        if last >= cells.last:
            break
        first = cells.next_first(first, last, overlap)
    return spans
