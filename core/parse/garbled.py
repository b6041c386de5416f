"""Garbled text: characters that are not language (glyph soup from custom-encoded fonts,
unmapped code points), flagged so a reader does not trust a chunk whose offsets hold but
whose words do not.

A text of at least ``MIN_CHARS`` non-space characters is garbled when more than
``MAX_SYMBOL_SHARE`` of its letters, digits, punctuation and symbols are punctuation or
symbols other than the ones prose and figures use (``COMMON``: brackets, dashes, quotes,
``$ % , . : ;`` ...) (a figure label read as ``.><57=+?=>/B/+.><=#0$1D23#``), or more than
``MAX_UNMAPPED_SHARE`` of its characters are U+FFFD or private-use code points (glyphs
with no Unicode mapping). Financial figures (``$ 2,297,282 (347)``) stay well under the
first share: digits count as language.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.provenance.types import Block

MIN_CHARS = 12
MAX_SYMBOL_SHARE = 0.3
COMMON = frozenset("_()[]{}$%,.:;!?'\"-‐‑–—/&*•·…“”‘’«»§¶†‡°€£¥")
MAX_UNMAPPED_SHARE = 0.05


def garbled(text: str) -> bool:
    """True when ``text`` is not language (see the module docstring)."""
    classes = text.translate(_CLASSES)  # one class letter per counted character
    counted = len(classes)
    if counted < MIN_CHARS:
        return False
    symbols, unmapped = classes.count(_SYMBOL), classes.count(_UNMAPPED)
    return symbols / counted > MAX_SYMBOL_SHARE or unmapped / counted > MAX_UNMAPPED_SHARE


_LANGUAGE, _COMMON, _SYMBOL, _UNMAPPED = "a", "c", "s", "u"


def _class_of(ch: str) -> str | None:
    """A character's class for ``garbled``: language (letters, digits), a common or
    another punctuation mark or symbol, unmapped (U+FFFD, private use); ``None``:
    not counted (spaces, marks, controls)."""
    if ch.isspace():
        return None
    category = unicodedata.category(ch)
    if ch == "\ufffd" or category == "Co":
        return _UNMAPPED
    if category[0] in "LN":
        return _LANGUAGE
    if category[0] in "PS":
        return _COMMON if ch in COMMON else _SYMBOL
    return None


class _Classes(dict[int, str | None]):
    """``str.translate``'s table of ``_class_of``, filled in as characters are met (the
    translation runs in C; a character's category is looked up once per process)."""

    def __missing__(self, code: int) -> str | None:
        found = self[code] = _class_of(chr(code))
        return found


_CLASSES = _Classes()


def garbled_totals(blocks: Iterable[Block]) -> tuple[int, int]:
    """``(blocks, characters)`` of ``blocks`` flagged garbled (characters: the length of
    each flagged block's text, so a count of ``doc.text`` characters)."""
    flagged = [b for b in blocks if b.garbled]
    return len(flagged), sum(b.char_end - b.char_start for b in flagged)
