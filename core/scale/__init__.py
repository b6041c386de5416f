"""Indexing on a Ray cluster (``chunkscope index --engine ray``), the optional ``scale``
extra. Only the ``--engine ray`` path and its tests import this package; the workbench
and the plain indexer never do, and Ray itself is imported only when a run starts.

Modules:

- ``cli``: the Ray run behind ``chunkscope index --engine ray``;
- ``cluster``: joining or starting the Ray cluster a run uses;
- ``plan``: what a run has to do, decided on the driver before any worker starts;
- ``stages``: the three stages as Ray Data calls them: parse and chunk, embed, write;
- ``pipeline``: ``index_on_ray``: the run as a Ray Data pipeline into a Chroma server;
- ``stage_report``: what a run did, per stage.
"""

from core.scale.pipeline import RayOptions, index_on_ray
from core.scale.stage_report import RayIndexReport
from core.scale.stages import RayJob

__all__ = ["RayIndexReport", "RayJob", "RayOptions", "index_on_ray"]
