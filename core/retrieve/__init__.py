"""Retrieve: one scope of the store ranked for a query under one method (``ranking``),
several methods side by side (``comparison``) and the visible second stage (``rerank``).
"""
