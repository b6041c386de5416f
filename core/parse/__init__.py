"""Parse: a ``Document`` into typed blocks (heading, paragraph, list, table, code,
caption, header, footer), each one contiguous span of the canonical text.

One parser module per kind of document (``heuristic`` for PDFs, ``plaintext``,
``commonmark``, ``markup_blocks``, ``transcript``; ``layout``: PyMuPDF's layout model),
and ``blocks.finish``, which makes every parser's candidates hold the invariants below.
The parser of a document is chosen by its format (``core.formats.parse_document``).

Invariants of every parse: blocks are sorted by ``char_start``, do not overlap, start
and end on a non-whitespace character, and ``doc.text[b.char_start:b.char_end] ==
b.text``. Headings have ``level >= 1``; ``heading_path`` is the breadcrumb of enclosing
headings (a heading's own path ends with itself).
"""
