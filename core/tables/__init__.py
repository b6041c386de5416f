"""Table detection on PDF pages: ruled tables from their drawn rules (``ruled``,
``ruled_edges``), borderless numeric grids from aligned cells (``grids``, ``grid_rows``),
and the signals that keep prose out (``table_signals``); ``finder`` is the entry the PDF
reader and the parser call.
"""
