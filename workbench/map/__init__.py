"""The Map page's own parts.

Modules:

- ``map_layout``: the scope laid out (PCA now, UMAP in the background), colourings,
  the picked chunk.
"""
