"""Chunkscope's library: source bytes to documents, blocks, chunks, method indexes, the
store, ranks, metrics, causes and sweeps, with exact provenance all the way. It never
imports Streamlit. Its packages are the stages of that pipeline: a module imports only its
own stage and earlier ones (the order: ``docs/layout.md``, checked by
``tests/test_layers.py``).

Modules:

- ``errors``: ``ChunkscopeError`` and its kinds, the errors a user can cause;
- ``settings``: every ``CHUNKSCOPE_*`` environment variable, one typed accessor each;
- ``bounded_cache``: the one thread-safe bounded LRU cache every stage uses;
- ``defaults``: the policy, methods and k every command and page starts on;
- ``config``: where the chunk store lives, a local folder or a Chroma server;
- ``registry``: the generic registry of named specs (formats, policies, methods);
- ``protocols``: the interfaces of what is swapped: encoder, store, a method's records;
- ``provenance``: the records every stage shares, boxes, citations, typed reading;
- ``align``: words with canonical offsets, exact and word-window alignment of text;
- ``native``: the compiled PDF text reader and its Python fallback;
- ``model``: the model's local files and its tokenizer as the chunkers see it;
- ``tables``: ruled and borderless table detection on PDF pages;
- ``ingest``: one loader per input format, OCR, limits;
- ``parse``: one block parser per kind of document;
- ``formats``: the format registry composing loaders and parsers;
- ``chunk``: the policy registry and one module per policy;
- ``embed``: the encoder and the vector functions (naive, late, contextual);
- ``methods``: the method registry composing them (dense, lexical, fusion);
- ``store``: chunks, vectors and full provenance in ChromaDB;
- ``imported``: chunks made elsewhere, anchored in the canonical text and audited;
- ``index``: documents to every method's records in the store;
- ``library``: the source bytes of every document, kept by sha256 beside the index;
- ``retrieve``: one scope ranked for a query, methods side by side, the rerank stage;
- ``evaluate``: labelled queries, metrics per method, saved runs, triage;
- ``diagnose``: why a query failed: full-depth ranks, cause signals, attribution;
- ``projection``: the map: a scope's chunks in two dimensions, one panel per method;
- ``tune``: sweeps of policies and methods, and the regression gate;
- ``render``: page images, overlays, charts, views and export;
- ``cli``: the ``chunkscope`` command line, one module per command;
- ``bench``: the benchmark against raw libraries and peers;
- ``scale``: indexing on a Ray cluster;
- ``__main__``: ``python -m core``, the command line.
"""
