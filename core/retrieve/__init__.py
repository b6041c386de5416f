"""Retrieve: one scope of the store ranked for a query, methods side by side.

Modules:

- ``ranking``: one scope ranked under one method: ``Ranker``, with a store and an
  in-memory backend;
- ``comparison``: one query under several methods: ranks, scores, rank changes;
- ``rerank``: the visible second stage: a wide candidate set reranked by logged features.
"""
