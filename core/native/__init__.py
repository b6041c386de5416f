"""The compiled MuPDF structured-text reader: ``stext.c``, built as the extension module
``_stext`` by ``setup.py`` when a compiler and PyMuPDF's MuPDF are there; PDFs are read
in Python otherwise. The compiled word scanners: ``words.c``, built as ``_words`` when a
compiler is there; words are scanned by regular expressions otherwise.

Modules:

- ``stext``: the compiled steps when built (a page's text lines, box packing, the ruled
  table finder's edges and cells) and the switch to the Python fallback.
- ``words``: the compiled word scanners when built (the words of ``core.align.words``,
  the lexical words of ``core.methods.lexical``, the word-alignment window steps) and
  the switch to the Python fallback.
"""
