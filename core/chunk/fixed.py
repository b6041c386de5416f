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
cell alone is larger than ``size``.
"""

from __future__ import annotations

import bisect

from core.chunk.analysis import DocAnalysis
from core.chunk.spans import Piece, safe_cut_after, safe_cut_before, skip_space, strip_span
from core.types import ChunkPolicy


def fixed_pieces(analysis: DocAnalysis, policy: ChunkPolicy) -> list[Piece]:
    if policy.unit == "tokens":
        return _token_windows(analysis, policy.size, policy.overlap)
    return _char_windows(analysis.text, policy.size, policy.overlap)


def _char_windows(text: str, size: int, overlap: int) -> list[Piece]:
    n = len(text)
    pieces: list[Piece] = []
    position = skip_space(text, 0)
    while position < n:
        window_end = min(position + size, n)
        if window_end < n:
            cut = safe_cut_before(text, window_end, position + 1)
            window_end = cut if cut is not None else safe_cut_after(text, position + 1)
        start, end = strip_span(text, position, window_end)
        pieces.append(Piece(char_start=start, char_end=end, oversize=end - start > size))
        following = skip_space(text, window_end)
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


def _token_windows(analysis: DocAnalysis, size: int, overlap: int) -> list[Piece]:
    text = analysis.text
    cells = analysis.cell_starts
    if not cells:
        start, end = strip_span(text, 0, len(text))
        return [Piece(char_start=start, char_end=end)] if start < end else []
    analysis.counts(_greedy_spans(analysis, size, overlap))  # one batch for the usual case
    pieces: list[Piece] = []
    first = 0
    while first < len(cells):
        last = _window_end(analysis, first, size)
        while True:
            start, end = _cells_span(analysis, first, last)
            fits = analysis.count(start, end) <= size
            if fits or last == first + 1:
                break
            last -= 1
        if start < end:
            pieces.append(Piece(char_start=start, char_end=end, oversize=not fits))
        if last >= len(cells):
            break
        first = _next_first(analysis, first, last, overlap)
    return pieces


def _window_end(analysis: DocAnalysis, first: int, size: int) -> int:
    """The largest ``last`` such that cells ``[first, last)`` hold at most ``size`` tokens."""
    totals = analysis.cell_tokens
    last = bisect.bisect_right(totals, totals[first] + size) - 1
    return min(max(last, first + 1), len(analysis.cell_starts))


def _next_first(analysis: DocAnalysis, first: int, last: int, overlap: int) -> int:
    """First cell of the next window: at most ``overlap`` tokens shared, always progress."""
    if not overlap:
        return last
    totals = analysis.cell_tokens
    return max(bisect.bisect_left(totals, totals[last] - overlap), first + 1)


def _cells_span(analysis: DocAnalysis, first: int, last: int) -> tuple[int, int]:
    return strip_span(analysis.text, analysis.cell_start(first), analysis.cell_end(last - 1))


def _greedy_spans(analysis: DocAnalysis, size: int, overlap: int) -> list[tuple[int, int]]:
    """The windows as they are when no window needs shrinking."""
    spans = []
    first = 0
    while first < len(analysis.cell_starts):
        last = _window_end(analysis, first, size)
        spans.append(_cells_span(analysis, first, last))
        if last >= len(analysis.cell_starts):
            break
        first = _next_first(analysis, first, last, overlap)
    return spans
