"""Tune by numbers: policy sweeps and a regression gate.

Modules:

- ``grid``: the (policy, size, overlap) points of a sweep, from user input;
- ``sweep``: every point evaluated with ``core.evaluate.run_eval`` (one shared vector and
  late-state cache, so late chunking pays poolings after the first point), with its
  index cost per method;
- ``sweep_records``: ``Sweep``: a sweep's points saved and loaded as one JSON file,
  resumable;
- ``job``: a sweep in a background thread, with progress and cancel;
- ``curves``: metric-vs-size series with bootstrap bands, crossovers, best cells;
- ``gate``: thresholds and a baseline run turned into a pass/regress verdict.
"""

from core.tune.grid import GridPoint, parse_grid, parse_overlaps, parse_sizes
from core.tune.sweep import SweepCancelled, run_sweep
from core.tune.sweep_records import (
    Cell,
    MethodCost,
    Sweep,
    SweepPoint,
    load_sweep,
    save_sweep,
    store_sweeps_dir,
)

__all__ = [
    "Cell",
    "GridPoint",
    "MethodCost",
    "Sweep",
    "SweepCancelled",
    "SweepPoint",
    "load_sweep",
    "parse_grid",
    "parse_overlaps",
    "parse_sizes",
    "run_sweep",
    "save_sweep",
    "store_sweeps_dir",
]
