"""Table detection on PDF pages: ruled tables from their drawn rules, borderless numeric
grids from aligned cells, and the signals that keep prose out.

Modules:

- ``finder``: the entry the PDF reader and the parser call: a page's table regions;
- ``table_signals``: cheap signals that a page may hold a ruled table;
- ``ruled``: ruled tables through PyMuPDF's table finder, fed ingest's characters;
- ``ruled_edges``: the edges of a page's drawings as the table finder sees them;
- ``grids``: borderless numeric tables from a page's text lines alone;
- ``grid_rows``: printed rows of line fragments, and the figures in them.
"""
