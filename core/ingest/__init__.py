"""Ingest: source bytes to a ``Document`` with one canonical text.

One loader module per input format (``pdf``, ``text``, ``html``, ``docx``,
``transcript``), each given a ``request.LoadRequest``; PDF pages without a text layer are
read by OCR (``ocr``); every input is read under the limits of ``limits`` (only regular
files; a typed one-line error past any limit). Which loader reads which bytes is the
format registry's choice (``core.formats``), where ``load_document`` lives.
"""
