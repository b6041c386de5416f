"""Blocks of reflowable text: Markdown syntax, or paragraphs of plain text.

Markdown (a practical subset of CommonMark, line based): ATX headings (``#`` to
``######``, level = number of ``#``), setext headings (a paragraph underlined with
``===`` for level 1 or ``---`` for level 2), fenced code (```` ``` ```` or ``~~~``, up to
the closing fence or the end of the text), indented code (4 spaces or a tab after a blank
line), pipe tables (a header row, a delimiter row like ``|---|:--:|``, then the rows
containing ``|``), lists (consecutive items ``-``/``*``/``+`` or ``1.``/``1)``, their
continuation lines, and blank lines between items form one block; bullets and numbers
are separate lists), and paragraphs (up to
a blank line or the start of another construct). Block quotes, HTML and thematic breaks
are paragraphs, so every visible character belongs to some block.

Plain text: paragraphs split at blank lines; runs of lines that start like list items
(bullets, ``1.``, ``1)``, ``a)``) form list blocks.
"""

from __future__ import annotations

import re

from core.parse.blocks import make_block
from core.types import Block, Document

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_MD_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])([ \t]|$)")
_TEXT_ITEM = re.compile(r"^\s*([-*+•◦▪‣·–]|\d{1,3}[.)]|[a-zA-Z][.)]|\(\w{1,3}\))\s+\S")
_INDENTED = re.compile(r"^( {4}|\t)")


def _line_texts(doc: Document) -> list[tuple[int, int, str]]:
    return [(ln.char_start, ln.char_end, doc.text[ln.char_start : ln.char_end]) for ln in doc.lines]


def parse_markdown(doc: Document) -> list[Block | None]:
    lines = _line_texts(doc)
    blocks: list[Block | None] = []
    i, n = 0, len(lines)
    previous_blank = True
    while i < n:
        start, _end, text = lines[i]
        if not text.strip():
            i += 1
            previous_blank = True
            continue
        if _FENCE.match(text):
            j = _fence_end(lines, i)
            blocks.append(make_block(doc, "code", start, lines[j][1]))
        elif match := _ATX.match(text):
            j = i
            blocks.append(make_block(doc, "heading", start, lines[i][1], level=len(match.group(1))))
        elif previous_blank and _INDENTED.match(text):
            j = _indented_end(lines, i)
            blocks.append(make_block(doc, "code", start, lines[j][1]))
        elif i + 1 < n and "|" in text and _TABLE_DELIMITER.match(lines[i + 1][2]):
            j = i + 1
            while j + 1 < n and "|" in lines[j + 1][2] and lines[j + 1][2].strip():
                j += 1
            blocks.append(make_block(doc, "table", start, lines[j][1]))
        elif _MD_ITEM.match(text):
            j = _list_end(lines, i)
            blocks.append(make_block(doc, "list", start, lines[j][1]))
        else:
            j, level = _paragraph_end(lines, i)
            kind = "heading" if level else "paragraph"
            blocks.append(make_block(doc, kind, start, lines[j][1], level=level))
        i = j + 1
        previous_blank = False
    return blocks


def _starts_construct(text: str) -> bool:
    return bool(_ATX.match(text) or _FENCE.match(text) or _MD_ITEM.match(text))


def _fence_end(lines: list[tuple[int, int, str]], i: int) -> int:
    fence = _FENCE.match(lines[i][2]).group(1)  # type: ignore[union-attr]
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    for j in range(i + 1, len(lines)):
        if closing.match(lines[j][2]):
            return j
    return len(lines) - 1


def _indented_end(lines: list[tuple[int, int, str]], i: int) -> int:
    last = i
    for j in range(i + 1, len(lines)):
        text = lines[j][2]
        if _INDENTED.match(text) and text.strip():
            last = j
        elif text.strip():
            break
    return last


def _marker_class(text: str) -> str:
    """``"bullet"`` or ``"ordered"`` for an item line, ``""`` otherwise."""
    match = _MD_ITEM.match(text)
    if not match:
        return ""
    return "bullet" if match.group(1) in "-*+" else "ordered"


def _list_end(lines: list[tuple[int, int, str]], i: int) -> int:
    """Items of one marker class (bullets, or numbers), their continuation lines, and
    blank lines followed by more of the list; another marker class starts a new list."""
    marker = _marker_class(lines[i][2])
    last = i
    j = i + 1
    while j < len(lines):
        text = lines[j][2]
        if not text.strip():
            k = j
            while k < len(lines) and not lines[k][2].strip():
                k += 1
            if k < len(lines) and (
                _marker_class(lines[k][2]) == marker or lines[k][2][:2] in ("  ", "\t")
            ):
                j = k
                continue
            break
        item = _marker_class(text)
        if _ATX.match(text) or _FENCE.match(text) or (item and item != marker):
            break
        last = j
        j += 1
    return last


def _paragraph_end(lines: list[tuple[int, int, str]], i: int) -> tuple[int, int]:
    """Index of the paragraph's last line, and a setext heading level (0 if none)."""
    j = i
    while j + 1 < len(lines):
        text = lines[j + 1][2]
        if not text.strip():
            break
        if match := _SETEXT.match(text):
            return j + 1, 1 if match.group(1)[0] == "=" else 2
        if _starts_construct(text) and not text.lstrip()[:1].isdigit():
            break
        j += 1
    return j, 0


def parse_plain_text(doc: Document) -> list[Block | None]:
    """Paragraphs at blank lines; runs of list-item lines become list blocks."""
    blocks: list[Block | None] = []
    group: list[tuple[int, int, str]] = []
    for line in [*_line_texts(doc), (len(doc.text), len(doc.text), "")]:
        if line[2].strip():
            group.append(line)
            continue
        if group:
            blocks.extend(_plain_group(doc, group))
            group = []
    return blocks


def _plain_group(doc: Document, group: list[tuple[int, int, str]]) -> list[Block | None]:
    """Split one blank-line-separated group into paragraph and list runs."""
    items = [bool(_TEXT_ITEM.match(text)) for _, _, text in group]
    if not any(items):
        return [make_block(doc, "paragraph", group[0][0], group[-1][1])]
    out: list[Block | None] = []
    k = 0
    while k < len(group):
        if items[k]:
            j = k
            while j + 1 < len(group) and (items[j + 1] or group[j + 1][2][:1].isspace()):
                j += 1
            out.append(make_block(doc, "list", group[k][0], group[j][1]))
        else:
            j = k
            while j + 1 < len(group) and not items[j + 1]:
                j += 1
            out.append(make_block(doc, "paragraph", group[k][0], group[j][1]))
        k = j + 1
    return out
