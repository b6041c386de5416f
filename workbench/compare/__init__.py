"""The Compare page's own parts.

- ``attribution``: "what moved this vector?": context attribution of a chunk.
"""
