"""Projection: the chunks of a scope drawn in two dimensions, one panel per dense method.

No Streamlit here; the Map page (``pages/map.py``) draws what these return.

Modules:

- ``points``: which chunks are drawn (every chunk of the scope, or a stated seeded sample
  that always keeps the chunks asked for) and their vectors under each method;
- ``fit``: one projection fitted jointly on every method's vectors, so a position
  means the same in every panel: PCA (instant) or UMAP (fixed seed), cached by (index
  version, methods, scope, kind);
- ``cohesion``: the numbers behind the picture: how close chunks sit to their own group
  (document or heading) against the others, per method, and the query's cosines.
"""

from core.projection.cohesion import Cohesion, gold_chunks, group_cohesion, query_cosines
from core.projection.fit import KINDS, Layout, layout
from core.projection.points import MAX_POINTS, MapScope, read_scope

__all__ = [
    "KINDS", "MAX_POINTS", "Cohesion", "Layout", "MapScope", "gold_chunks",
    "group_cohesion", "layout", "query_cosines", "read_scope",
]  # fmt: skip
