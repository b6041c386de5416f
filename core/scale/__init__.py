"""Indexing on a Ray cluster (``chunkscope index --engine ray``), the optional ``scale``
extra. Only the ``--engine ray`` path and its tests import this package; the workbench
and the plain indexer never do, and Ray itself is imported only when a run starts."""

from core.scale.pipeline import RayOptions, index_on_ray
from core.scale.stage_report import RayIndexReport
from core.scale.stages import RayJob

__all__ = ["RayIndexReport", "RayJob", "RayOptions", "index_on_ray"]
