"""Formats: how bytes become a ``Document`` and a ``Document`` becomes blocks.

Each input format is one ``FormatSpec`` in the registry: a loader of ``core.ingest``
composed with a block parser of ``core.parse``. The built-in formats are registered when
this package is imported.

Modules:

- ``format_registry``: the registry of input formats, one ``FormatSpec`` per format;
- ``catalogue``: the formats Chunkscope ships (``builtin_specs``);
- ``loading``: ``load_document``: a file of any registered format read as a ``Document``;
- ``parsing``: ``parse_document``: a document's blocks, by the parser its format names.
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
registry.load_plugins()  # installed packages' chunkscope.formats entry points
