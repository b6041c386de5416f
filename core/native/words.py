"""Compiled word scanners (``core/native/words.c``), when built: the words of
``core.align.words`` and the lexical words of ``core.methods.lexical``, read in C.

A first import spent a good part of its time scanning words: every page of every
document is read into words to anchor a foreign chunk set, and each document again into
lexical terms to diagnose a failure. Both are one regular expression and a Python tuple
per match; the scanners walk the text once and build the same tuples, with the same
comparison forms (an ASCII word's built in C, any other by the same Python function).
``tests/test_native_words.py`` compares them with the regular expressions on every text
of the corpus and on random text.

The module is an optional extension of the package (``setup.py``), built by
``pip install -e .`` (``make`` runs it); it needs a C compiler and Python's headers only.
Without it, or with ``CHUNKSCOPE_NATIVE_TEXT=0``, the regular expressions scan the same
words. ``python -m core.native.words`` says in one line when the fallback is in use.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from functools import cache
from typing import Any

from core.native import load_compiled, status_line

# The code points the words' pattern counts as combining marks (category M), as a bitmap
# of the 65,536 below U+10000 (the pattern lists none past them).
MARKS_FROM, MARKS_TO = 0x300, 0x10000


_module, _why_not = load_compiled("_words")


def available() -> bool:
    """Whether the compiled scanners are in use."""
    return _module is not None


def status() -> str:
    """One line: which scanner reads words, and why not the compiled one when it is not."""
    return status_line(_module, _why_not, "word scanner", "words are scanned in Python")


def mark_code_points() -> list[int]:
    """The combining marks (Unicode category M) from U+0300 up to U+FFFF."""
    return [c for c in range(MARKS_FROM, MARKS_TO) if unicodedata.category(chr(c)).startswith("M")]


@cache
def _mark_bits() -> bytes:
    bits = bytearray(MARKS_TO // 8)
    for c in mark_code_points():
        bits[c >> 3] |= 1 << (c & 7)
    return bytes(bits)


def scan_words(
    text: str, start: int, stop: int, word_type: type, normalise: Callable[[str], str]
) -> list[Any]:
    """``core.align.words.words_of`` in C (see ``words.c``); only when ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    found: list[Any] = _module.scan_words(text, start, stop, _mark_bits(), word_type, normalise)
    return found


def scan_terms(text: str) -> list[tuple[int, int, str]]:
    """The lexical words of ``text`` as ``(start, end, str.lower of the word)``, in C;
    only when ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    found: list[tuple[int, int, str]] = _module.scan_terms(text)
    return found


def word_ids(region: list[Any], vocab: dict[str, int]) -> list[int]:
    """``[vocab.get(word.norm, -1) for word in region]`` in C; only when ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    found: list[int] = _module.word_ids(region, vocab)
    return found


def tight_window(ids: list[int], wanted: list[int], need: int) -> tuple[int, int] | None:
    """``core.align.window._tight_window`` in C, the wanted counts as a list indexed by
    id; only when ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    found: tuple[int, int] | None = _module.tight_window(ids, wanted, need)
    return found


def best_matched(ids: list[int], wanted: list[int], size: int) -> int:
    """The most wanted words any run of at most ``size`` ids holds (the count of
    ``core.align.window._best_coverage``) in C; only when ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    found: int = _module.best_matched(ids, wanted, size)
    return found


def stemmed(found: list[tuple[int, int, str]], stems: dict[str, str], *, grouped: bool) -> Any:
    """``[(a, b, stems[w]) for a, b, w in found if w in stems]``, or with ``grouped`` each
    stem with the ``(a, b)`` of its words in order (a dict), in C; only when
    ``available()``."""
    if _module is None:
        raise RuntimeError("the compiled word scanner is not built")
    return _module.stemmed(found, stems, grouped)


if __name__ == "__main__":
    # after an install: one line when words are scanned in Python (in use, quiet)
    if _module is None:
        print(status(), file=sys.stderr)
