"""Joining or starting the Ray cluster an index run uses.

``--ray-address`` (else ``$RAY_ADDRESS``) names a running cluster (``auto``, ``HOST:PORT``
of a head started with ``ray start --head``); without one, a local cluster is started
for the run and shut down after it, with the resources asked for (``cpus``, ``gpus``),
no dashboard, no usage statistics and a bounded object store. A cluster the run joined
is left running. Workers of a joined cluster import this project as installed on their
node (``pip install chunkscope[scale]`` there); a local cluster's workers get the folder
holding the driver's ``core`` first on their ``PYTHONPATH``, so they run the same code.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import core
from core.errors import ChunkscopeError

LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2  # 512 MiB: rows are pickled documents and vectors


class RayMissingError(ChunkscopeError):
    """Ray is not installed (it is the optional ``scale`` extra)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterRequest:
    """What the run needs: an address to join, or the resources of a local cluster.

    ``cpus``/``gpus`` are Ray's logical resources of a local cluster (None: what the
    machine has); ``object_store_bytes`` bounds its shared-memory object store.
    """

    address: str | None = None
    cpus: int | None = None
    gpus: int | None = None
    object_store_bytes: int = LOCAL_OBJECT_STORE_BYTES


def import_ray():  # noqa: ANN201 (the module)
    """``ray`` with Ray Data, or a one-line error saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise RayMissingError(
            "--engine ray needs Ray: pip install 'chunkscope[scale]' (ray[data]==2.60.0)"
        ) from exc
    return ray


def local_runtime_env(*extra: str) -> dict[str, dict[str, str]]:
    """Workers import the driver's ``core`` (then ``extra`` folders, then the inherited
    ``PYTHONPATH``), not whichever copy an editable install points at."""
    root = str(Path(core.__file__).resolve().parent.parent)
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join([root, *extra, *inherited])}}


def start_local(request: ClusterRequest) -> None:
    """``ray.init`` of a local cluster with the request's resources (see the module doc)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import_ray().init(
        num_cpus=request.cpus,
        num_gpus=request.gpus,
        include_dashboard=False,
        object_store_memory=request.object_store_bytes,
        log_to_driver=False,
        runtime_env=local_runtime_env(),
    )


@contextlib.contextmanager
def ray_cluster(request: ClusterRequest) -> Iterator[dict[str, float]]:
    """Connected to Ray for the block; yields the cluster's total resources.

    Shuts Ray down on the way out only when this call connected it (an already
    initialised Ray, as in tests, is used as it is and left so).
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = import_ray()
    if ray.is_initialized():
        yield dict(ray.cluster_resources())
        return
    address = request.address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            start_local(request)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ChunkscopeError(
            f"cannot connect to {where} ({first}); start one with `ray start --head` or "
            "drop --ray-address to start a local one"
        ) from exc
    try:
        yield dict(ray.cluster_resources())
    finally:
        ray.shutdown()
