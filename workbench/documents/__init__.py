"""The session's documents and what is read from them, shared by all pages.

Modules:

- ``session``: the bundled samples, the documents of this session, the current document,
  the tokenizer and the model's facts;
- ``kept_docs``: the store's library (every session sees the same kept documents);
- ``reads``: how documents are read (the OCR policy, progress, read times);
- ``scans``: OCR in the sidebar and the notes about pages read by OCR;
- ``parse_cache``: parse and chunk results, cached by document and parameters;
- ``chunk_store``: the chunk store the sidebar names, opened once per process;
- ``chunk_sets``: imported chunk sets: offered as policies, the import form, the audit.
"""
