"""Parse: a ``Document`` into typed blocks (heading, paragraph, list, table, code,
caption, header, footer), each one contiguous span of the canonical text.

One parser module per kind of document, and ``blocks.finish``, which makes every
parser's candidates hold the invariants below. The parser of a document is chosen by its
format (``core.formats.parse_document``).

Invariants of every parse: blocks are sorted by ``char_start``, do not overlap, start
and end on a non-whitespace character, and ``doc.text[b.char_start:b.char_end] ==
b.text``. Headings have ``level >= 1``; ``heading_path`` is the breadcrumb of enclosing
headings (a heading's own path ends with itself).

Modules:

- ``blocks``: what every parser shares: trimmed spans, boxes, heading paths, ``finish``;
- ``heuristic``: the fast PDF parser: typed blocks from the laid-out lines;
- ``headings``: which runs of PDF lines are headings, and their levels;
- ``furniture``: running headers and footers of PDFs;
- ``garbled``: text that is not language, flagged so a reader does not trust it;
- ``layout``: the slower PDF parser: PyMuPDF's layout model mapped to blocks;
- ``plaintext``: plain text: paragraphs at blank lines, list items;
- ``commonmark``: Markdown through markdown-it-py (CommonMark and GFM tables);
- ``markup_blocks``: the blocks a source declares (HTML elements, Word styles) as they are;
- ``turns``: transcripts: one ``turn`` block per turn of speech.
"""
