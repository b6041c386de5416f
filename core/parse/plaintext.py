"""Blocks of plain text: paragraphs split at blank lines; runs of lines that start like
list items (bullets, ``1.``, ``1)``, ``a)``) form list blocks. (Markdown is read by
``core.parse.commonmark``.)
"""

from __future__ import annotations

import re

from core.parse.blocks import make_block
from core.provenance.types import Block, Document

_TEXT_ITEM = re.compile(r"^\s*([-*+•◦▪‣·–]|\d{1,3}[.)]|[a-zA-Z][.)]|\(\w{1,3}\))\s+\S")


def _line_texts(doc: Document) -> list[tuple[int, int, str]]:
    return [(ln.char_start, ln.char_end, doc.text[ln.char_start : ln.char_end]) for ln in doc.lines]


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
