"""Blocks of a document whose source declares them (HTML elements, Word paragraph
styles, Markdown's CommonMark blocks): the loader's ``Document.markup_blocks`` become
typed blocks as they are."""

from __future__ import annotations

from collections.abc import Sequence

from core.parse.blocks import make_block
from core.provenance.types import Block, Document, MarkupBlock


def parse_markup(doc: Document, markup: Sequence[MarkupBlock] | None = None) -> list[Block | None]:
    """Typed blocks of ``markup`` (default: the document's ``markup_blocks``)."""
    return [
        make_block(doc, b.kind, b.char_start, b.char_end, level=b.level)  # type: ignore[arg-type]
        for b in (doc.markup_blocks if markup is None else markup)
    ]
