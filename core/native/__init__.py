"""The compiled MuPDF structured-text reader (``stext.c``, built as ``_stext``) and its
loader with the Python fallback switch (``stext``).
"""
