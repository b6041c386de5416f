"""Blocks of a document whose source declares them (HTML elements, Word paragraph
styles): the loader's ``Document.markup_blocks`` become typed blocks as they are."""

from __future__ import annotations

from core.parse.blocks import make_block
from core.types import Block, Document


def parse_markup(doc: Document) -> list[Block | None]:
    return [
        make_block(doc, b.kind, b.char_start, b.char_end, level=b.level)  # type: ignore[arg-type]
        for b in doc.markup_blocks
    ]
