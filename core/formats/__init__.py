"""Formats: how bytes become a ``Document`` and a ``Document`` becomes blocks.

Each input format is one ``FormatSpec`` in the registry (``registry.py``): a loader of
``core.ingest`` composed with a block parser of ``core.parse``. The built-in formats are
registered by ``catalogue.py`` when this package is imported. ``load_document`` reads a
file of any registered format (``loading.py``); ``parse_document`` types its blocks with
the parser its format names (``parsing.py``).
"""

from __future__ import annotations

from core.formats import catalogue
from core.formats import format_registry as registry
from core.formats.loading import doc_id_for, document_to_dict, load_document, sha256_of
from core.formats.parsing import PARSERS, ParseResult, ParserName, parse_document

__all__ = [
    "PARSERS",
    "ParseResult",
    "ParserName",
    "doc_id_for",
    "document_to_dict",
    "load_document",
    "parse_document",
    "sha256_of",
]

registry.register_builtins(catalogue.builtin_specs())
