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

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

from core.settings import NATIVE_TEXT


def load_compiled(name: str) -> tuple[ModuleType | None, str]:
    """The compiled module ``core.native.<name>`` when it is to be used, else ``None`` and
    why not (switched off, not built, or built but not loadable)."""
    if not NATIVE_TEXT.read():
        return None, f"switched off by {NATIVE_TEXT.name}"
    try:
        return importlib.import_module(f"core.native.{name}"), ""
    except ImportError as exc:
        if importlib.util.find_spec(f"core.native.{name}") is None:
            return None, "not built (`pip install -v --no-build-isolation -e .` says why)"
        return None, f"not loaded ({exc})"


def status_line(module: ModuleType | None, why_not: str, what: str, fallback: str) -> str:
    """One line: whether the compiled ``what`` is in use, and why not, with ``fallback``
    saying what does its work then."""
    if module is not None:
        name = os.path.basename(module.__file__ or module.__name__.rsplit(".", 1)[-1])
        return f"chunkscope: compiled {what} in use ({name})"
    return f"chunkscope: compiled {what} {why_not}; {fallback}"
