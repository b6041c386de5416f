"""The Compare page's own parts.

Modules:

- ``attribution``: "what moved this vector?": context attribution of a chunk.
"""
