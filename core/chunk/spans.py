"""Span arithmetic shared by the chunkers: stripping, safe cut points, sizes, cutting.

All positions are code-point offsets into one document's canonical text. A *cut* is a
position between two characters. A cut is *safe* when it does not separate a character
from what attaches to it: combining marks, ZERO WIDTH JOINER and what follows it,
variation selectors, emoji skin-tone modifiers and tag characters (an approximation of
Unicode grapheme clusters that needs no extra package).
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

from core.chunk.analysis import DocAnalysis
from core.provenance.types import ChunkPolicy

_ZWJ = "\u200d"
_FIRST_COMBINING = "\u0300"


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """A chunk-to-be: a stripped span, and whether it is larger than the policy size."""

    char_start: int
    char_end: int
    oversize: bool = False
    heading_block: int | None = None  # structure: the block whose path the chunk carries


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without leading and trailing whitespace (may become empty)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def skip_space(text: str, position: int) -> int:
    """First non-whitespace position at or after ``position`` (``len(text)`` if none)."""
    n = len(text)
    while position < n and text[position].isspace():
        position += 1
    return position


def _attaches(char: str) -> bool:
    code = ord(char)
    if char == _ZWJ or 0xFE00 <= code <= 0xFE0F or 0x1F3FB <= code <= 0x1F3FF:
        return True
    if 0xE0020 <= code <= 0xE007F or 0xE0100 <= code <= 0xE01EF:
        return True
    return unicodedata.category(char) in ("Mn", "Mc", "Me")


def is_safe_cut(text: str, position: int) -> bool:
    if position <= 0 or position >= len(text):
        return True
    char = text[position]
    if char < _FIRST_COMBINING:  # nothing below U+0300 attaches to what precedes it
        return text[position - 1] != _ZWJ
    return not (_attaches(char) or text[position - 1] == _ZWJ)


def safe_cut_before(text: str, position: int, low: int) -> int | None:
    """The last safe cut in ``[low, position]``, or ``None``."""
    while position >= low:
        if is_safe_cut(text, position):
            return position
        position -= 1
    return None


def safe_cut_after(text: str, position: int) -> int:
    """The first safe cut at or after ``position``."""
    while not is_safe_cut(text, position):
        position += 1
    return position


class Measure:
    """Sizes of spans in the policy's unit (``chars`` or ``tokens``).

    ``size`` is exact: characters of the span, or ``tokenizer.count`` of its text.
    ``estimate`` is cheap and meant for packing decisions that ``size`` then confirms.
    """

    def __init__(self, analysis: DocAnalysis, policy: ChunkPolicy) -> None:
        self.analysis = analysis
        self.text = analysis.text
        self.limit = policy.size
        self.tokens = policy.unit == "tokens"
        self._cell_starts = analysis.cell_starts if self.tokens else []
        self._cell_tokens = analysis.cell_tokens if self.tokens else []

    def size(self, start: int, end: int) -> int:
        return self.analysis.count(start, end) if self.tokens else end - start

    def estimate(self, start: int, end: int) -> int:
        if not self.tokens:
            return end - start
        starts, totals = self._cell_starts, self._cell_tokens
        return totals[bisect.bisect_left(starts, end)] - totals[bisect.bisect_left(starts, start)]

    def fits(self, start: int, end: int) -> bool:
        return self.estimate(start, end) <= self.limit and self.size(start, end) <= self.limit

    def cut(self, start: int, end: int) -> list[Piece]:
        """Cut the stripped span ``[start, end)`` into pieces within the limit, in order.

        Cuts prefer whitespace in the second half of a piece, then any safe cut (chars)
        or token-cell start (tokens). A piece that cannot be made small enough (one
        character cluster or one token cell larger than the limit) is flagged oversize.
        """
        pieces: list[Piece] = []
        position = start
        while position < end:
            if self.fits(position, end):
                pieces.append(Piece(char_start=position, char_end=end))
                break
            cut = self._tokens_cut(position, end) if self.tokens else self._chars_cut(position, end)
            piece_start, piece_end = strip_span(self.text, position, cut)
            oversize = self.size(piece_start, piece_end) > self.limit
            pieces.append(Piece(char_start=piece_start, char_end=piece_end, oversize=oversize))
            position = skip_space(self.text, cut)
        return pieces

    def _chars_cut(self, start: int, end: int) -> int:
        """A cut in ``(start, end]`` at most ``limit`` chars on, unless a cluster is longer."""
        window_end = start + self.limit
        for cut in range(window_end, start + self.limit // 2, -1):
            if self.text[cut].isspace():
                return cut
        safe = safe_cut_before(self.text, window_end, start + 1)
        return safe if safe is not None else min(safe_cut_after(self.text, start + 1), end)

    def _tokens_cut(self, start: int, end: int) -> int:
        """A token-cell start in ``(start, end)`` whose piece fits, preferring whitespace.

        Falls back to the first cell start after ``start`` (its piece may be oversize).
        """
        cells = self.analysis.cell_starts
        totals = self.analysis.cell_tokens
        first = bisect.bisect_right(cells, start)
        if first >= len(cells) or cells[first] >= end:
            return end
        base = totals[first - 1] if first else 0
        last = min(
            bisect.bisect_right(totals, base + self.limit) - 1,
            bisect.bisect_left(cells, end) - 1,
        )
        candidates = [cells[k] for k in range(first, last + 1)]  # ascending
        half = base + self.limit // 2
        spaced = [
            cells[k]
            for k in range(last, first - 1, -1)
            if totals[k] >= half and self.text[cells[k] - 1].isspace()
        ]
        for cut in spaced[:3]:
            if self._piece_fits(start, cut):
                return cut
        low, high = 0, len(candidates) - 1
        best = cells[first]
        while low <= high:
            middle = (low + high) // 2
            if self._piece_fits(start, candidates[middle]):
                best = candidates[middle]
                low = middle + 1
            else:
                high = middle - 1
        return best

    def _piece_fits(self, start: int, cut: int) -> bool:
        return self.size(*strip_span(self.text, start, cut)) <= self.limit
