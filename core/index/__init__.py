"""Index: documents to chunks to every method's records in the store (``indexer``), the
inputs it is given (``inputs``), the guard against silent replacement (``identity``) and
a run in a background thread (``background``).
"""
