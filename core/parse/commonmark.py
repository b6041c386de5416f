"""Blocks of Markdown through markdown-it-py (CommonMark plus GFM pipe tables).

Each top-level block token's source line map (``token.map = [first, last)`` lines of
``doc.lines``) becomes one block over those lines (trimmed), so offsets hold by
construction and nothing is searched for: headings (ATX and setext, level from the
tag), paragraphs, lists (bullet and ordered, nested lists inside their top-level list),
fenced and indented code, tables; block quotes, HTML blocks and thematic breaks are
paragraphs. Lines no token maps (link reference definitions, which markdown-it consumes
silently) become paragraphs too, so every visible character belongs to some block.

Measured against the hand-written line parser this replaces, on the five
chunking_evaluation corpora, ``sample_docs/state_of_the_union.md`` and the project's own
Markdown files: the same blocks at the same offsets on every one of them; it reads nested
constructs the subset misread (a fence inside a list item, ``---`` under a list) and
costs 5-10x the time (36 ms against 4 ms for the 738k-char finance.md), paid once per
document.

Only block tokens are read, so the core ``inline`` rule is off: inline parsing never
changes a block's lines (link reference definitions are a block rule), and its cost on
hostile input is not linear in practice (3.9 M ``[`` took 40 s of inline link-label
scanning; without it the parse takes 25 ms). The block tokens are the same with it on
or off on every Markdown file of the corpus and the project.

The blocks are read when the file is loaded (``markdown_markup``, the document's
``markup_blocks``), under the ``markdown_tokens`` limit: markdown-it costs about 5-9 us
and 0.4 KB a block token, and real documents make at most about 30,000 tokens a million
characters, but crafted ones (a table 50,000 cells wide, 400,000 lines of nested quotes
and lists) make more than one a character: 4.4 M tokens, 38 s and 1.7 GB before this
limit. Past it, loading stops with the limit's one line, so a file is refused at upload
instead of failing later at its parse.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from core.ingest import limits
from core.parse.markup_blocks import parse_markup
from core.provenance.types import Block, BlockKind, Document, MarkupBlock, TextLine

_KINDS: dict[str, BlockKind] = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "fence": "code",
    "code_block": "code",
    "table_open": "table",
    "blockquote_open": "paragraph",
    "html_block": "paragraph",
    "hr": "paragraph",
}


class _Spent(Exception):
    """The block parser made more tokens than the ``markdown_tokens`` limit."""


class _Budget(list[object]):
    """The token list of one parse; refuses the token past ``room``."""

    __slots__ = ("room",)

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def append(self, token: object) -> None:
        if len(self) >= self.room:
            raise _Spent
        super().append(token)


def _budgeted(state: Any) -> None:  # markdown-it's StateCore, before its block rule
    state.tokens = _Budget(int(limits.value("markdown_tokens")))


@functools.cache
def _parser():  # -> markdown_it.MarkdownIt
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table").disable("inline")
    parser.core.ruler.before("block", "chunkscope_budget", _budgeted)
    return parser


def markdown_markup(text: str, lines: Sequence[TextLine], name: str) -> tuple[MarkupBlock, ...]:
    """The blocks of Markdown ``text`` (whose ``lines`` are ``text_lines(text)``), in
    token order, then the unmapped runs. Raises ``LimitExceededError`` past the
    ``markdown_tokens`` limit; ``name`` is the file's name in its message."""
    try:
        tokens = _parser().parse(text)
    except _Spent:
        limits.exceeded("markdown_tokens", name)
    blocks: list[MarkupBlock] = []
    covered = bytearray(len(lines))
    for token in tokens:
        kind = _KINDS.get(token.type)
        if kind is None or token.level != 0 or not token.map:
            continue
        first, last = token.map[0], min(token.map[1], len(lines)) - 1
        if last < first:
            continue
        level = int(token.tag[1]) if kind == "heading" else 0
        blocks.append(
            MarkupBlock(
                kind=kind,
                level=level,
                char_start=lines[first].char_start,
                char_end=lines[last].char_end,
            )
        )
        covered[first : last + 1] = b"\x01" * (last + 1 - first)
    blocks.extend(_unmapped_paragraphs(lines, covered))
    return tuple(blocks)


def parse_commonmark(doc: Document) -> list[Block | None]:
    """The loader's blocks, or, for a document built without the loader, read now."""
    markup = doc.markup_blocks or markdown_markup(doc.text, doc.lines, doc.source)
    return parse_markup(doc, markup)


def _unmapped_paragraphs(lines: Sequence[TextLine], covered: bytearray) -> list[MarkupBlock]:
    """Paragraphs over runs of lines that no top-level token maps (blank runs vanish in
    ``make_block``)."""
    out: list[MarkupBlock] = []
    run: list[int] = []
    for i in [*range(len(lines)), -1]:
        if i >= 0 and not covered[i]:
            run.append(i)
            continue
        if run:
            out.append(
                MarkupBlock(
                    kind="paragraph",
                    level=0,
                    char_start=lines[run[0]].char_start,
                    char_end=lines[run[-1]].char_end,
                )
            )
            run = []
    return out
