"""Index: documents to chunks to every method's records in the store.

Modules:

- ``indexer``: the pipeline: document -> blocks -> chunks -> records per method -> store;
- ``sources``: what the indexer is given: documents or files, the files under folders,
  and the refusal of two inputs with one document id;
- ``identity``: the guard against silent replacement across index runs;
- ``background``: an index run in a background thread, with progress and cancel.
"""
