"""Which reading of a file a stored record was made from.

A document's ``sha256`` names its bytes; its canonical text (and so every stored span)
also depends on the loaders and parsers that read them. ``PARSE_REVISION`` counts the
changes to that reading: it is bumped whenever a change to ingest or parse changes the
canonical text of any input, and index markers and kept token states carry it, so records
made from an older reading of the same bytes are indexed again instead of being reused
with offsets into a text the document no longer has. ``tests/test_parse_revision.py``
pins the canonical text of the samples and corpus files and fails when it changes under
an unchanged revision.

History: 1, everything before markers carried it; 2, ruled tables of text only and the
tables found from ingest's own characters (filings and diagrams read row by row); 3,
numeric grids align figures on their digits (a hanging "%", ")" or "bps" and a joined "$"
are cut off), end at a sentence or a header row across the figure columns, continue the
grid above only on most of its columns, and find their header over the whole grid, with
no title above it (statements' percentage rows and totals stay in their tables); 4, a
comment column right of the figures is no row's label and no label row, a row with a
percentage is no header, rows may sit two line heights apart, and the label column's
heading at the foot of a header set off from the first row belongs to the header, as
does a short heading set in from the labels above a header row ("Global" over
"Revenues") (the 10-Q's product table, J&J's statements of earnings and its sales by
area read as one table each, under their whole headers); 5, pages without a text layer
are read by OCR (``core.ingest.ocr``, the default policy ``auto``): the scans'
canonical texts are their recognised lines, where they were empty.
"""

from __future__ import annotations

PARSE_REVISION = 5
