"""Two saved runs side by side (setup differences, paired metric deltas), and one run
split by document.

Queries are paired by id (only ids present in both runs, with gold on the same document
version, are compared). ``deltas[method][metric]`` is ``b - a`` with a paired bootstrap
interval over those queries; ``fixed``/``broke`` list the queries whose failure flag
changed between the runs under each method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.evaluate.bootstrap import DeltaInterval, metric_deltas
from core.evaluate.metrics import aggregate
from core.evaluate.run_file import EvalRun

_SETUP_FIELDS = (
    "model",
    "policy",
    "scope",
    "ks",
    "threshold",
    "corpus",
    "queries_sha256",
    "code_version",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunComparison:
    """Run ``b`` measured against run ``a`` (deltas are ``b - a``)."""

    run_a: str
    run_b: str
    setup_differences: Mapping[str, tuple[object, object]]
    methods: tuple[str, ...]
    n_common: int
    deltas: Mapping[str, Mapping[str, DeltaInterval | None]]
    fixed: Mapping[str, tuple[str, ...]]
    broke: Mapping[str, tuple[str, ...]]

    def to_dict(self) -> dict[str, object]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "setup_differences": {k: list(v) for k, v in self.setup_differences.items()},
            "methods": list(self.methods),
            "n_common": self.n_common,
            "deltas": {
                m: {name: d.to_dict() if d else None for name, d in rows.items()}
                for m, rows in self.deltas.items()
            },
            "fixed": {m: list(ids) for m, ids in self.fixed.items()},
            "broke": {m: list(ids) for m, ids in self.broke.items()},
        }


def compare_runs(a: EvalRun, b: EvalRun) -> RunComparison:
    """Compare two runs on the methods and queries they share."""
    differences = {
        name: (getattr(a, name), getattr(b, name))
        for name in _SETUP_FIELDS
        if _plain(getattr(a, name)) != _plain(getattr(b, name))
    }
    methods = tuple(m for m in a.methods if m in b.methods)
    by_id_b = {q.id: q for q in b.queries}
    pairs = [
        (qa, by_id_b[qa.id])
        for qa in a.queries
        if qa.id in by_id_b and by_id_b[qa.id].doc_sha256 == qa.doc_sha256
    ]
    names = list(a.metrics[methods[0]]) if methods else []
    deltas = {}
    fixed: dict[str, tuple[str, ...]] = {}
    broke: dict[str, tuple[str, ...]] = {}
    for method in methods:
        shared = [n for n in names if n in b.metrics.get(method, {})]
        deltas[method] = metric_deltas(
            [qa.metrics[method] for qa, _ in pairs],
            [qb.metrics[method] for _, qb in pairs],
            shared,
            resamples=a.resamples,
            seed=a.seed,
        )
        fixed[method] = tuple(
            qa.id for qa, qb in pairs if qa.failed[method] and not qb.failed[method]
        )
        broke[method] = tuple(
            qa.id for qa, qb in pairs if not qa.failed[method] and qb.failed[method]
        )
    return RunComparison(
        run_a=a.run_id,
        run_b=b.run_id,
        setup_differences=differences,
        methods=methods,
        n_common=len(pairs),
        deltas=deltas,
        fixed=fixed,
        broke=broke,
    )


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class DocBreakdown:
    """One document's share of a run: means over its ``n_queries`` queries per method."""

    doc_id: str
    n_queries: int
    metrics: Mapping[str, Mapping[str, float | None]]
    n: Mapping[str, Mapping[str, int]]


def metrics_by_doc(run: EvalRun) -> list[DocBreakdown]:
    """The run's metrics recomputed per gold document (sorted by ``doc_id``)."""
    groups: dict[str, list] = {}
    for record in run.queries:
        groups.setdefault(record.doc_id, []).append(record)
    out = []
    for doc_id in sorted(groups):
        records = groups[doc_id]
        means: dict[str, Mapping[str, float | None]] = {}
        counts: dict[str, Mapping[str, int]] = {}
        for method in run.methods:
            names = list(run.metrics[method])
            means[method], counts[method] = aggregate([r.metrics[method] for r in records], names)
        out.append(DocBreakdown(doc_id=doc_id, n_queries=len(records), metrics=means, n=counts))
    return out
