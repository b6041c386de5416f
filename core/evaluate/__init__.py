"""Evaluate: labelled queries, exact gold spans, separate metrics per method, triage.

- ``labels``: the JSONL query-set format (gold spans or evidence text + page);
- ``resolve`` / ``words``: evidence -> exact canonical span (``exact`` or ``aligned``) or
  unresolved;
- ``importers``: the chunking_evaluation set and CSV/JSONL QA tables;
- ``metrics`` / ``bootstrap``: per-query metrics, means with their counts, paired deltas;
- ``runner``: chunk, embed once per method, rank in memory, score: an ``EvalRun``;
- ``cost``: what a run will encode and about how long it takes, before it starts;
- ``runs`` / ``compare``: run JSON (save/load), run-to-run comparison, per-document split;
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
