"""Parse a document of any registered format into typed blocks (heading, paragraph,
list, table, code, caption, header, footer), each one contiguous span of the canonical
text.

Invariants of every ``ParseResult``: blocks are sorted by ``char_start``, do not overlap,
start and end on a non-whitespace character, and ``doc.text[b.char_start:b.char_end] ==
b.text``. Headings have ``level >= 1``; ``heading_path`` is the breadcrumb of enclosing
headings (a heading's own path ends with itself).

Parsers: ``"fast"`` (default) is the block parser the document's format registers
(``core.formats.format_registry``: ``core.parse.heuristic`` for PDFs, ``core.parse.plaintext`` for
text, ``core.parse.commonmark`` for Markdown, ...); ``"layout"`` uses a format's
layout-model parser where it has one (PyMuPDF's layout model for PDFs,
``core.parse.layout``) and falls back to the fast one; ``"fast+layout"`` (PDFs) is the
fast parser with the layout model's tables on the pages where the fast pass leaves
column-aligned text untyped (``core.parse.layout.model_pages``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from core.errors import ChunkscopeError
from core.formats.format_registry import get_format
from core.parse.blocks import finish
from core.provenance.types import Block, Document

ParserName = Literal["fast", "layout", "fast+layout"]
PARSERS: tuple[str, ...] = ("fast", "layout", "fast+layout")

__all__ = ["PARSERS", "ParseResult", "ParserName", "parse_document"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseResult:
    """Blocks of one document, the parser that made them, and its wall time in seconds;
    ``model_pages`` (1-based) are the pages the layout model read and ``model_s`` its
    share of the time (``fast+layout``: only where the fast pass saw untyped columns)."""

    blocks: tuple[Block, ...]
    parser: str
    elapsed_s: float
    model_pages: tuple[int, ...] = ()
    model_s: float = 0.0


def parse_document(
    doc: Document,
    *,
    parser: ParserName = "fast",
    progress: Callable[[int, int], None] | None = None,
) -> ParseResult:
    """Typed blocks of ``doc`` (see the module docstring for the invariants).

    ``progress(done, total)`` counts pages through the layout model (about half a second
    a page), then reports the whole document done; the fast parser reports only that."""
    if parser not in PARSERS:
        raise ChunkscopeError(f"unknown parser {parser!r}; use one of {', '.join(PARSERS)}")
    started = time.perf_counter()
    spec = get_format(doc.kind)
    raw: list[Block | None]
    model_pages: tuple[int, ...] = ()
    model_s = 0.0
    if parser == "layout" and spec.parse_layout is not None:
        raw = spec.parse_layout(doc, progress=progress)
        used = "layout"
        model_pages = tuple(p.number for p in doc.pages if p.has_text)
        model_s = time.perf_counter() - started
    elif parser == "fast+layout" and spec.paged:
        from core.parse.layout import parse_pdf_mixed

        raw, use = parse_pdf_mixed(doc, progress=progress)
        used, model_pages, model_s = "fast+layout", use.pages, use.elapsed_s
    else:
        raw = spec.parse(doc)
        used = "fast"
    blocks = finish(raw)
    if progress is not None:
        total = max(len(doc.pages), 1)
        progress(total, total)
    return ParseResult(
        blocks=blocks,
        parser=used,
        elapsed_s=time.perf_counter() - started,
        model_pages=model_pages,
        model_s=model_s,
    )
