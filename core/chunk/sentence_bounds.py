"""Rule-based sentence segmentation that returns exact character spans.

``sentence_spans(text)`` returns half-open ``[start, end)`` spans of code points, sorted,
disjoint, each stripped of surrounding whitespace and never empty. Together they hold
every non-whitespace character of ``text`` exactly once: the spans partition the text's
content, and only whitespace lies between them.

A sentence ends:

* after ``.``, ``!``, ``?``, ``…`` (or a run of them) and any closing quotes or brackets,
  when whitespace or the end of the text follows, except
  - after an abbreviation that never ends a sentence (``Dr.``, ``Fig.``, ``e.g.``, ``vs.``);
  - after an abbreviation that may end one (``etc.``, ``U.S.``, ``Inc.``, a single
    initial ``J.``) unless the next word is a common sentence opener (``The``, ``We``...);
  - after an ellipsis followed by a lowercase word (``wait... what``);
  - after an enumerator at the start of a sentence (``14. debt``), so it stays with its text;
  - after a mark with whitespace before it (dot leaders ``. . . .`` of a table of contents);
  - ``3.14``, ``U.S.A.`` and ``e.g.,`` are never ends, since no whitespace follows the dot;
* at a paragraph break: two or more line breaks (``\\r\\n`` counts as one; lone ``\\r``
  and other Unicode line separators count), or a PARAGRAPH SEPARATOR;
* at a single line break that ends a Markdown heading or a table row (a line with two
  or more ``|``), that precedes a list item, heading, table row or block quote, or that
  ends a short line without final punctuation followed by a capitalised line (a title or
  heading without a full stop);
* at every position in ``hard_breaks`` (the chunkers pass block boundaries).

Lowercase sentence starts are allowed (some corpora are lowercased), so ``. `` followed by
a lowercase word still ends a sentence unless one of the exceptions above applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_NEVER_ENDS = _word_set(
    """
    mr mrs ms dr prof sr st mt fig figs eq eqs no nos vol vols pp ch sec secs cf vs viz
    approx ca e.g i.e al ed eds rev gen col lt sgt capt cmdr jan feb mar apr jun jul aug
    sep sept oct nov dec tab ref refs art abs bzw vgl bspw ggf usw z.b d.h u.a s.o s.u
    dipl ing nr abb tel
    """
)
_MAY_END = _word_set("etc inc ltd co corp jr bros llc plc u.s u.k u.n a.m p.m ph.d")
_OPENERS = _word_set(
    """
    the a an it its this that these those there he she we they i you our their his her my
    but however then thus yet if when while after before what why how who which one some
    many most all each both der die das ein eine es er sie wir ich aber dies diese
    """
)
_TERMINAL = re.compile(
    r"[.!?\u2026\u203c\u2047-\u2049\u3002\uff01\uff1f]+[\"'\)\]\}\u00bb\u2019\u201d\u203a\u300d\u300f]*"
)
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_WS_WITH_BREAK = re.compile(r"\s*?(?:\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029])\s*")
_WORD_BEFORE = re.compile(r"(\S+)$")
_NEXT_WORD = re.compile(r"\s*[\"'(\[\u00ab\u2018\u201c]*(\w[\w'\u2019-]*)")
_BLOCK_MARKER = re.compile(
    r"[ \t]*(?:[-*+\u2022\u25aa\u25e6\u2023\u2013][ \t]|\d{1,3}[.)][ \t]|#{1,6}[ \t]|>|\|)"
)
_NUMBERED_TITLE = re.compile(r"(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXLC]+\.)[ \t]+\S")
_SHORT_LINE_WORDS = 8
_SHORT_LINE_CHARS = 70


def sentence_spans(text: str, hard_breaks: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Sentences of ``text`` as stripped, disjoint, sorted ``(start, end)`` spans."""
    cuts = set(_terminal_cuts(text))
    cuts.update(_line_cuts(text))
    cuts.update(p for p in hard_breaks if 0 < p < len(text))
    return _spans_between(text, sorted(cuts))


def _spans_between(text: str, cuts: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    previous = 0
    for cut in [*cuts, len(text)]:
        start, end = _strip(text, previous, cut)
        if start < end:
            spans.append((start, end))
        previous = cut
    return spans


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _terminal_cuts(text: str) -> Iterable[int]:
    sentence_start = 0
    for match in _TERMINAL.finditer(text):
        end = match.end()
        if end < len(text) and not text[end].isspace():
            continue
        if _ends_sentence(text, match, sentence_start):
            sentence_start = end
            yield end


def _ends_sentence(text: str, match: re.Match[str], sentence_start: int) -> bool:
    if match.start() == 0 or text[match.start() - 1].isspace():
        return False  # a lone mark (". . ." leaders, " ?") ends nothing
    marks = match.group().rstrip("\"')]}\u00bb\u2019\u201d\u203a\u300d\u300f")
    end = match.end()
    if end >= len(text):
        return True
    next_word = _NEXT_WORD.match(text, end)
    following = next_word.group(1) if next_word else ""
    if marks in ("...", "\u2026") or marks.endswith(("...", "\u2026")):
        return not following[:1].islower()
    if marks != ".":
        return True
    word_match = _WORD_BEFORE.search(text, max(0, match.start() - 40), match.start())
    word = word_match.group(1) if word_match else ""
    key = word.lstrip("\"'([{\u00ab\u2018\u201c").lower()
    if key in _NEVER_ENDS:
        return False
    opener = following.lower() in _OPENERS
    if key in _MAY_END or re.fullmatch(r"(?:\w\.)+\w", key) or _is_initial(word):
        return opener
    if key.isdigit() and len(key) <= 3 and word_match is not None:
        return not _opens_line_or_sentence(text, word_match.start(), sentence_start)
    return True


def _opens_line_or_sentence(text: str, position: int, sentence_start: int) -> bool:
    """Only whitespace between ``position`` and the sentence's or the line's start."""
    if not text[sentence_start:position].strip():
        return True
    before = text[max(sentence_start, position - 80) : position]
    line = _LINE_BREAK.split(before)[-1]
    return len(line) < len(before) and not line.strip()


def _is_initial(word: str) -> bool:
    return len(word) == 1 and word.isalpha() and word.isupper()


def _line_cuts(text: str) -> Iterable[int]:
    line_start = 0
    for match in _WS_WITH_BREAK.finditer(text):
        start, end = match.span()
        breaks = _LINE_BREAK.findall(text, start, end)
        if (
            len(breaks) >= 2
            or "\u2029" in breaks
            or _single_break_ends_sentence(text[line_start:start], text, end)
        ):
            yield start
        line_start = end


def _single_break_ends_sentence(line: str, text: str, next_start: int) -> bool:
    """Whether the break after ``line`` (the next line starts at ``next_start``) ends one."""
    next_line = text[next_start : _line_end(text, next_start)]
    stripped = line.strip()
    if not stripped or not next_line:
        return False
    if _BLOCK_MARKER.match(next_line) or _is_table_row(next_line):
        return True
    if stripped.startswith("#") or _is_table_row(stripped):
        return True
    return _looks_like_title(stripped) and (next_line[0].isupper() or next_line[0].isdigit())


def _looks_like_title(line: str) -> bool:
    if len(line) > _SHORT_LINE_CHARS or line[-1] in ".,;:!?-\u2010\u2011\u00ad":
        return False
    if len(line.split()) > _SHORT_LINE_WORDS:
        return False
    return line[0].isupper() or bool(_NUMBERED_TITLE.match(line))


def _is_table_row(line: str) -> bool:
    return line.count("|") >= 2


def _line_end(text: str, position: int) -> int:
    match = _LINE_BREAK.search(text, position)
    return match.start() if match else len(text)
