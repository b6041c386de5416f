"""The benchmark: our pipeline against the floor and against peers, measured in one run.

``chunkscope bench`` (``make bench``) records the machine, warms up, and runs every case
several times on the same inputs, interleaving ours and the baseline round by round so
machine noise hits both; it reports medians, their ratio and whether each target holds.
The cases are ``CASE_NAMES`` of ``inputs``, and the opt-in ``OPT_IN_CASES`` when named
(``gpu``: long context, ``--device cuda`` only). Provenance (``doc.text[span] ==
span.text``) is checked on every result of ours, outside the timed region.

Modules:

- ``inputs``: settings, the shared corpus, the loaded inputs kept once;
- ``timing``: warm-up, interleaved repeats, medians;
- ``machine``: cores, load, torch threads, device, library versions;
- ``report``: the rows, the printed table and the JSON object;
- ``run``: the asked cases in order, a failing one a FAILED row;
- ``cases``: the CPU cases without a model: parse, re-chunk, slider move (ui), memory;
- ``table_cases``: the ``tables`` case: parse time of a table-heavy PDF and its quality;
- ``table_quality``: the fast parser's block typing against PyMuPDF's layout model;
- ``ocr_cases``: the ``ocr`` case: accuracy and speed of reading pages without text;
- ``import_cases``: anchoring chunks another extractor made, and an imported run;
- ``byo_cases``: a LangChain pipeline's chunks from ``import-chunks`` to the first
  failure's suggested cause, against parsing the same files;
- ``embed_cases``: naive against sentence-transformers, late against naive;
- ``sweep_cases``: late chunking over many policies from the state store;
- ``store_cases``: our ``ChunkStore`` against raw Chroma calls, query latency at scale;
- ``lexical_cases``: building a BM25 index, a BM25 query against a dense one;
- ``diagnose_cases``: full-depth rank, failure signals, attribution, agreement;
- ``map_cases``: Compare and Map at scale, over synthetic collections;
- ``eval_cases``: a first evaluation at the encoder's rate, a second one for free;
- ``gpu``: late chunking at long context, one pass against 512-token passes;
- ``scale_cases``: the Ray indexer against the plain one;
- ``scale_corpus``: the opt-in ``scale-corpus`` case, a generated corpus on Ray.
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
