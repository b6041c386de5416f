"""The benchmark: our pipeline against the floor and against peers, measured in one run.

``chunkscope bench`` (``make bench``) records the machine, warms up, and runs every case
several times on the same inputs, interleaving ours and the baseline round by round so
machine noise hits both; it reports medians, their ratio and whether each target holds.
Cases: ``parse``, ``rechunk``, ``naive``, ``late``, ``store``, ``ui``, ``memory`` and
``gpu`` (long context, ``--device cuda`` only). Provenance (``doc.text[span] ==
span.text``) is checked on every result of ours, outside the timed region.

Modules: ``inputs`` (settings, corpus, loaded inputs), ``timing`` (interleaved medians),
``machine``, ``report`` (rows, table, JSON), ``cases`` / ``embed_cases`` /
``store_cases`` / ``gpu`` (the cases), ``run`` (the runner).
"""

from __future__ import annotations

from core.bench.inputs import CASE_NAMES, OPT_IN_CASES, BenchSettings, default_settings
from core.bench.report import CaseResult, format_table, to_json
from core.bench.run import run_bench, settings_dict

__all__ = [
    "CASE_NAMES",
    "OPT_IN_CASES",
    "BenchSettings",
    "CaseResult",
    "default_settings",
    "format_table",
    "run_bench",
    "settings_dict",
    "to_json",
]
