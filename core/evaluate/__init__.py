"""Evaluate: labelled queries, exact gold spans, separate metrics per method, triage.

Modules:

- ``labels``: the JSONL query-set format (gold spans or evidence text + page);
- ``resolve``: evidence -> an exact canonical span (``exact`` or ``aligned``, through
  ``core.align``) or unresolved;
- ``importers``: the chunking_evaluation set and CSV/JSONL QA tables as query sets;
- ``corpus``: every document's chunks stacked in ranking order, with their documents;
- ``runner``: chunk, index once per method, rank in memory, score: an ``EvalRun``;
- ``scoring``: every query scored against every chunk per method, ranked, measured;
- ``metrics``: per-query metrics and their means with counts;
- ``bootstrap``: paired bootstrap intervals of the difference between two methods;
- ``cost``: what a run will encode and about how long it takes, before it starts;
- ``run_file``: runs as records (per-query results, means, deltas), saved as JSON;
- ``run_store``: the store's ``runs/`` folder, where the CLI and the workbench keep runs;
- ``compare``: two saved runs side by side, and one run split by document;
- ``traces``: what a retriever returned per query, read from its log;
- ``imported_run``: a retriever's log as a run, beside our methods on its chunk spans;
- ``triage``: reproducible failure samples, cause tags in SQLite, regression-set export.
"""

from core.evaluate.bootstrap import DeltaInterval, metric_deltas, paired_bootstrap
from core.evaluate.compare import DocBreakdown, RunComparison, compare_runs, metrics_by_doc
from core.evaluate.importers import import_chunking_eval, import_qa
from core.evaluate.labels import (
    Evidence,
    GoldSpan,
    LabelledQuery,
    parse_queries,
    read_queries,
    write_queries,
)
from core.evaluate.metrics import MetricSpec, aggregate, query_metrics
from core.evaluate.resolve import (
    DEFAULT_THRESHOLD,
    DocumentIndex,
    Resolution,
    ResolvedQuery,
    Resolver,
    Unresolved,
    pin_labels,
    resolve_queries,
)
from core.evaluate.run_file import EvalRun, QueryRecord, RankedHit, load_run, save_run
from core.evaluate.runner import EvalConfig, delta_pairs, run_eval
from core.evaluate.triage import (
    CAUSES,
    Failure,
    Tag,
    TriageStore,
    agreement,
    default_triage_path,
    export_tags,
    sample_failures,
    tag_query,
)

__all__ = [
    "CAUSES",
    "DEFAULT_THRESHOLD",
    "DeltaInterval",
    "DocBreakdown",
    "DocumentIndex",
    "EvalConfig",
    "EvalRun",
    "Evidence",
    "Failure",
    "GoldSpan",
    "LabelledQuery",
    "MetricSpec",
    "QueryRecord",
    "RankedHit",
    "Resolution",
    "ResolvedQuery",
    "Resolver",
    "RunComparison",
    "Tag",
    "TriageStore",
    "Unresolved",
    "aggregate",
    "compare_runs",
    "default_triage_path",
    "delta_pairs",
    "export_tags",
    "import_chunking_eval",
    "import_qa",
    "load_run",
    "metric_deltas",
    "metrics_by_doc",
    "paired_bootstrap",
    "parse_queries",
    "pin_labels",
    "query_metrics",
    "read_queries",
    "resolve_queries",
    "run_eval",
    "sample_failures",
    "save_run",
    "agreement",
    "tag_query",
    "write_queries",
]
