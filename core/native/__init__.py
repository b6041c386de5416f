"""The compiled MuPDF structured-text reader: ``stext.c``, built as the extension module
``_stext`` by ``setup.py`` when a compiler and PyMuPDF's MuPDF are there; PDFs are read
in Python otherwise.

Modules:

- ``stext``: the compiled steps when built (a page's text lines, box packing, the ruled
  table finder's edges and cells) and the switch to the Python fallback.
"""
