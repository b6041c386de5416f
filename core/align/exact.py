"""The exact step of evidence resolution: a whole-word match of the evidence, spacing
aside, in a whitespace-free view of one region of the canonical text.

The view keeps, for each of its characters, the canonical offset it came from, so a span
is read from that map (never from a position in the view). A match counts only on word
boundaries: it neither starts nor ends between two word characters (letters, digits,
combining marks) of the text, and between every two adjacent word characters of the
evidence the text has whitespace exactly where the evidence has it (``note book`` never
matches ``notebook``, nor ``he said`` the end of ``the said``). Spacing next to
punctuation may differ freely. ``exact_matches`` yields every qualifying match;
``exact_match`` takes the first.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from itertools import accumulate

import numpy as np

_SPACE = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class View:
    """``text`` without whitespace; ``offsets[i]`` is the canonical offset of ``text[i]``.
    ``starts``: the indices ``i > 0`` where whitespace stood before ``text[i]`` (where the
    offsets jump), in order; ``None`` when not known (read from ``offsets`` then)."""

    text: str
    offsets: list[int]
    starts: list[int] | None = None


@cache
def _whitespace() -> np.ndarray:
    """The code points ``\\s`` matches (all of Unicode's lie below U+3001)."""
    return np.array([c for c in range(0x3001) if _SPACE.match(chr(c))], dtype=np.uint32)


def whitespace_free_view(text: str, start: int, end: int) -> View:
    """``text[start:end]`` without whitespace, offsets into ``text`` itself (computed on
    the code points at once: a document's view is read for every chunk of an import)."""
    segment = text[start:end]
    if not segment:
        return View(text="", offsets=[], starts=[])
    points = np.frombuffer(segment.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    kept = np.flatnonzero(~np.isin(points, _whitespace()))
    jumps = np.flatnonzero(np.diff(kept) > 1) + 1
    kept_text = points[kept].tobytes().decode("utf-32-le", "surrogatepass")  # \s taken out
    return View(text=kept_text, offsets=(kept + start).tolist(), starts=jumps.tolist())


def _is_word_char(ch: str) -> bool:
    """A character that belongs to a word (letter, digit or combining mark)."""
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _splits_a_word(text: str, offset: int, region: tuple[int, int]) -> bool:
    """Whether a span edge at canonical ``offset`` falls between two word characters."""
    if offset <= region[0] or offset >= region[1]:
        return False
    return _is_word_char(text[offset - 1]) and _is_word_char(text[offset])


def _breaks_agree(view: View, found: int, needle: str, breaks: set[int]) -> bool:
    """Whether, between every two adjacent word characters of the match, the page has
    whitespace exactly where the evidence had it (``breaks``: needle indices that
    followed whitespace in the evidence). Only the indices where the two disagree are
    looked at (whitespace is a few characters in a passage, word characters most)."""
    if view.starts is not None:  # the jumps inside the match, as indices into the needle
        low = bisect.bisect_right(view.starts, found)
        high = bisect.bisect_left(view.starts, found + len(needle), low)
        gaps = {i - found for i in view.starts[low:high]}
    else:
        seg = view.offsets[found : found + len(needle)]
        pairs = zip(seg, seg[1:], strict=False)
        gaps = {i for i, (a, b) in enumerate(pairs, start=1) if b - a > 1}
    return not any(
        0 < k < len(needle) and _is_word_char(needle[k - 1]) and _is_word_char(needle[k])
        for k in gaps.symmetric_difference(breaks)
    )


def exact_matches(
    text: str,
    view: View,
    pieces: list[str],
    region: tuple[int, int],
    *,
    word_edges: bool = True,
    within: tuple[int, int] | None = None,
) -> Iterator[tuple[int, int]]:
    """``[char_start, char_end)`` of every whole-word match of the passage ``pieces`` (its
    whitespace-separated parts) in ``view``, in text order; matches may overlap. Without
    ``word_edges`` a match may also start or end inside a word (a chunk that a character
    window cut mid-word); the spacing inside it must still agree. ``within``: only matches
    that start at or after its first offset and end by its second."""
    for first, last, whole in exact_candidates(text, view, pieces, region, within=within):
        if whole or not word_edges:
            yield first, last


class SampledIndex:
    """Where a long passage occurs in a view's text without reading the text for it: the
    ``GRAM``-character piece at every ``STEP``-th offset, by its offsets. A passage at
    offset ``p`` holds the piece at the next multiple of ``STEP`` (``j < STEP`` characters
    into it), so a passage of at least ``STEP + GRAM - 1`` characters is found by looking
    up its first ``STEP`` pieces, each place then compared whole (a short passage, or one
    whose pieces stand in too many places, is found by scanning). An import looks for
    every chunk's text in its document: without the index, each look reads the whole
    document."""

    GRAM = 12
    STEP = 24
    MOST = 64  # places to compare past which the text is scanned instead

    def __init__(self, text: str) -> None:
        self.text = text
        at: dict[str, list[int]] = {}
        for q in range(0, len(text) - self.GRAM + 1, self.STEP):
            at.setdefault(text[q : q + self.GRAM], []).append(q)
        self._at = at

    def find_all(self, needle: str, low: int, high: int) -> list[int]:
        """Every offset where ``needle`` occurs inside ``text[low:high]``, in order (the
        offsets ``str.find`` gives, one after another; overlapping places included)."""
        text, size = self.text, len(needle)
        places = None
        if size >= self.STEP + self.GRAM - 1:
            lists = [self._at.get(needle[j : j + self.GRAM], ()) for j in range(self.STEP)]
            if sum(map(len, lists)) <= self.MOST:
                found = {
                    q - j for j, qs in enumerate(lists) for q in qs
                    if low <= q - j and q - j + size <= high and text.startswith(needle, q - j)
                }  # fmt: skip
                places = sorted(found)
        return places if places is not None else list(_scanned(text, needle, low, high))


def exact_candidates(
    text: str,
    view: View,
    pieces: list[str],
    region: tuple[int, int],
    *,
    within: tuple[int, int] | None = None,
    index: SampledIndex | None = None,
) -> Iterator[tuple[int, int, bool]]:
    """``exact_matches`` without ``word_edges`` in one pass, each match with whether it
    also lies on word edges: ``(char_start, char_end, whole)``; ``index``: the view's text
    indexed (``SampledIndex``), where a long passage is looked up."""
    needle = "".join(pieces)
    if not needle:
        return
    breaks = set(accumulate(map(len, pieces[:-1])))  # where the passage had whitespace
    low, high = 0, len(view.text)
    if within is not None:
        low = bisect.bisect_left(view.offsets, within[0])
        high = bisect.bisect_left(view.offsets, within[1])
    if index is not None:
        places: Iterable[int] = index.find_all(needle, low, high)
    else:
        places = _scanned(view.text, needle, low, high)
    for found in places:
        first, last = view.offsets[found], view.offsets[found + len(needle) - 1] + 1
        if _breaks_agree(view, found, needle, breaks):
            whole = not (_splits_a_word(text, first, region) or _splits_a_word(text, last, region))
            yield first, last, whole


def _scanned(text: str, needle: str, low: int, high: int) -> Iterator[int]:
    found = text.find(needle, low, high)
    while found >= 0:
        yield found
        found = text.find(needle, found + 1, high)


def exact_match(
    text: str, view: View, pieces: list[str], region: tuple[int, int]
) -> tuple[int, int] | None:
    """The first of ``exact_matches`` (``None`` when no match qualifies)."""
    return next(exact_matches(text, view, pieces, region), None)
