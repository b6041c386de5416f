"""Ingest: source bytes to a ``Document`` with one canonical text.

Each loader is given a ``request.LoadRequest``; PDF pages without a text layer are read
by OCR; every input is read under the limits of ``limits`` (only regular files; a typed
one-line error past any limit). Which loader reads which bytes is the format registry's
choice (``core.formats``), where ``load_document`` lives.

Modules:

- ``request``: what a loader is given: the bytes and what was computed once;
- ``files``: reading a source file from disk, bounded: only regular files, size-limited;
- ``limits``: the limits of time and memory one input may take;
- ``revision``: ``PARSE_REVISION``, which reading of a file a stored record came from;
- ``text``: plain text and Markdown;
- ``html``: HTML, every character tied to the raw bytes it came from;
- ``docx``: Word documents, paragraph styles as typed blocks;
- ``transcript``: WebVTT and SRT transcripts, read as turns of speech;
- ``pdf``: PDFs through PyMuPDF: opening, errors and the canonical text's rules;
- ``pdf_text``: the PDF canonical-text builder, page by page;
- ``pdf_lines``: the line-level rules of the PDF canonical text;
- ``pdf_guard``: MuPDF errors as typed errors, each page checked against the limits;
- ``pdf_outline``: the PDF outline (bookmarks) as ``OutlineEntry`` records;
- ``page_labels``: the number each PDF page prints on itself, beside its index;
- ``reading_order``: the reading order of a page's text blocks (recursive XY-cut);
- ``ocr``: OCR of PDF pages through Tesseract, lines with boxes and confidence;
- ``gc_pause``: the garbage collector paused while a document's text is built.
"""
