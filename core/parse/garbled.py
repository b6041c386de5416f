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
    from core.types import Block

MIN_CHARS = 12
MAX_SYMBOL_SHARE = 0.3
COMMON = frozenset("_()[]{}$%,.:;!?'\"-‐‑–—/&*•·…“”‘’«»§¶†‡°€£¥")
MAX_UNMAPPED_SHARE = 0.05


def garbled(text: str) -> bool:
    """True when ``text`` is not language (see the module docstring)."""
    counted = symbols = unmapped = 0
    for ch in text:
        if ch.isspace():
            continue
        if ch == "\ufffd" or unicodedata.category(ch) == "Co":
            unmapped += 1
            counted += 1
            continue
        kind = unicodedata.category(ch)[0]
        if kind in "LN":
            counted += 1
        elif kind in "PS":
            counted += 1
            symbols += ch not in COMMON
    if counted < MIN_CHARS:
        return False
    return symbols / counted > MAX_SYMBOL_SHARE or unmapped / counted > MAX_UNMAPPED_SHARE


def garbled_totals(blocks: Iterable[Block]) -> tuple[int, int]:
    """``(blocks, characters)`` of ``blocks`` flagged garbled (characters: the length of
    each flagged block's text, so a count of ``doc.text`` characters)."""
    flagged = [b for b in blocks if b.garbled]
    return len(flagged), sum(b.char_end - b.char_start for b in flagged)
