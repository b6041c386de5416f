"""A regression gate: a run judged against thresholds, a baseline run and must-pass cases.

Three kinds of check, each a ``Finding`` that passes or fails:

- ``min``: a method's mean of a metric is at least the threshold (``hit@5=0.8``);
- ``drop``: against a baseline run, a method's mean fell by at most the allowed amount
  (``mrr=0.02``): ``baseline - now <= allowed``; only methods and metrics both runs hold;
- ``must-pass``: a query tagged in a past run's triage has a gold chunk in the top
  ``text_k`` again (under the method it was tagged for when that method is checked, else
  under every checked method); a tagged query that no longer resolves fails, with why.

Per-query regressions against the baseline (first gold rank worse than before, matched by
query id and document) are listed whether or not a check fails, worst first, so a failing
gate names the queries to read. Ranks beyond the run's depth are ``None`` ("not in the top
N") and rank after every number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.errors import LabelError
from core.evaluate.run_file import EvalRun


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One check: ``value`` (now) against ``limit``; ``baseline`` for a drop."""

    kind: str  # "min" | "drop" | "must-pass"
    method: str
    metric: str
    value: float | None
    limit: float | None
    passed: bool
    baseline: float | None = None
    query_id: str = ""
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "method": self.method,
            "metric": self.metric,
            "value": self.value,
            "limit": self.limit,
            "baseline": self.baseline,
            "passed": self.passed,
            "query_id": self.query_id,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """A query whose first gold rank got worse under ``method`` (``None``: beyond depth)."""

    query_id: str
    method: str
    before: int | None
    after: int | None
    now_failing: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "query_id": self.query_id,
            "method": self.method,
            "before": self.before,
            "after": self.after,
            "now_failing": self.now_failing,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    findings: tuple[Finding, ...]
    regressions: tuple[Regression, ...]

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.findings)

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if not f.passed]

    def to_dict(self) -> dict[str, object]:
        return {
            "passed": self.passed,
            "findings": [f.to_dict() for f in self.findings],
            "regressions": [r.to_dict() for r in self.regressions],
        }


def parse_limits(text: str | None, flag: str) -> dict[str, float]:
    """``"hit@5=0.8,mrr=0.6"`` -> ``{"hit@5": 0.8, "mrr": 0.6}``; ``LabelError`` if malformed."""
    out: dict[str, float] = {}
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        name, sep, number = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(number)
        except ValueError:
            raise LabelError(
                f"{flag} takes metric=value pairs (hit@5=0.8,mrr=0.6), got {item!r}"
            ) from None
    return out


def check_metric_names(run: EvalRun, names: Sequence[str], flag: str) -> None:
    known = list(run.metrics[run.methods[0]]) if run.methods else []
    for name in names:
        if name not in known:
            raise LabelError(
                f"{flag}: {name!r} is not a metric of this run; use {', '.join(known)}"
            )


def _rank_key(rank: int | None) -> float:
    return float("inf") if rank is None else float(rank)


def regressions(run: EvalRun, baseline: EvalRun) -> list[Regression]:
    """Queries both runs hold (same id and document) whose rank got worse, worst first."""
    before = {(q.id, q.doc_id): q for q in baseline.queries}
    out = []
    for query in run.queries:
        old = before.get((query.id, query.doc_id))
        if old is None:
            continue
        for method in run.methods:
            if method not in old.ranks:
                continue
            was, now = old.ranks[method], query.ranks[method]
            if _rank_key(now) > _rank_key(was):
                failing = query.failed[method] and not old.failed[method]
                out.append(
                    Regression(
                        query_id=query.id, method=method, before=was, after=now, now_failing=failing
                    )
                )
    return sorted(
        out,
        key=lambda r: (not r.now_failing, -(_rank_key(r.after) - _rank_key(r.before)), r.query_id),
    )


def minimum_findings(run: EvalRun, minimums: Mapping[str, float]) -> list[Finding]:
    check_metric_names(run, list(minimums), "--min")
    out = []
    for method in run.methods:
        for metric, limit in minimums.items():
            value = run.metrics[method][metric]
            passed = value is not None and value >= limit
            out.append(
                Finding(
                    kind="min",
                    method=method,
                    metric=metric,
                    value=value,
                    limit=limit,
                    passed=passed,
                )
            )
    return out


def drop_findings(run: EvalRun, baseline: EvalRun, drops: Mapping[str, float]) -> list[Finding]:
    check_metric_names(run, list(drops), "--max-drop")
    out = []
    for method in (m for m in run.methods if m in baseline.methods):
        for metric, allowed in drops.items():
            now, was = run.metrics[method].get(metric), baseline.metrics[method].get(metric)
            passed = now is None or was is None or was - now <= allowed + 1e-12
            out.append(
                Finding(
                    kind="drop",
                    method=method,
                    metric=metric,
                    value=now,
                    limit=allowed,
                    baseline=was,
                    passed=passed,
                )
            )
    return out


def must_pass_findings(
    run: EvalRun | None, cases: Mapping[str, tuple[str, ...]], unresolved: Mapping[str, str]
) -> list[Finding]:
    """``cases``: tagged query id -> the methods it was tagged under ("" for none): each
    must find its gold under each of them (under every method when none is in the run)."""
    out = [
        Finding(
            kind="must-pass",
            method=", ".join(m for m in cases[q] if m),
            metric="",
            value=None,
            limit=None,
            passed=False,
            query_id=q,
            detail=f"not checked: {why}",
        )
        for q, why in sorted(unresolved.items())
    ]
    if run is None:
        return out
    hit = f"hit@{run.text_k}"
    for query in sorted(run.queries, key=lambda q: q.id):
        tagged = [m for m in cases.get(query.id, ()) if m in run.methods]
        for method in tagged or list(run.methods):
            found = bool(query.metrics[method][hit])
            out.append(
                Finding(
                    kind="must-pass",
                    method=method,
                    metric=hit,
                    value=float(found),
                    limit=1.0,
                    passed=found,
                    query_id=query.id,
                    detail=f"rank {query.ranks[method]}",
                )
            )
    return out
