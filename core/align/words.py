"""Words of a text for evidence alignment, with canonical offsets.

A word is a run of letters, digits and combining marks; a hyphen (or soft hyphen) between
two runs, with or without whitespace (a line break) after it, joins them, so
``docu-\\nment``, ``well-known`` and ``document`` each form one word. A word's comparison
form is NFKC (ligatures such as ``ﬁ`` become ``fi``), casefolded, letters and digits
only. Offsets are those of the regex match on the text itself.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from typing import NamedTuple

from core.native import words as native


@cache
def _word_pattern() -> re.Pattern[str]:
    marks = "".join(re.escape(chr(c)) for c in native.mark_code_points())
    piece = rf"(?:[^\W_]|[{marks}])+"
    return re.compile(rf"{piece}(?:[-\u00ad\u2010\u2011]\s*{piece})*")


@lru_cache(maxsize=1 << 16)
def normalise_word(word: str) -> str:
    """Comparison form of a word: NFKC, casefolded, letters and digits only."""
    folded = unicodedata.normalize("NFKC", word).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


class Word(NamedTuple):
    """One word of the canonical text: ``[char_start, char_end)`` and its comparison form.
    A named tuple: a document's words are made by the ten thousand, and a tuple is made
    several times faster than a frozen dataclass (an import anchors in every page's words)."""

    char_start: int
    char_end: int
    norm: str


def words_of(text: str, start: int = 0, end: int | None = None) -> list[Word]:
    """The words of ``text[start:end]`` with offsets into ``text`` (empty forms dropped):
    the pattern's matches, scanned in C when the compiled scanner is built (the same
    words, ``core.native.words``)."""
    stop = len(text) if end is None else end
    if native.available():
        return native.scan_words(text, start, stop, Word, normalise_word)
    found = []
    norm_of = normalise_word
    for match in _word_pattern().finditer(text, start, stop):
        norm = norm_of(match.group())
        if norm:
            found.append(Word(match.start(), match.end(), norm))
    return found
