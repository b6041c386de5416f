"""Diagnose cases: a chunk's exact rank at full depth in a large collection; what the
diagnosis of 40 failures of a run costs; the diagnosis against constructed causes.

``core.diagnose.depth.full_depth_ranks`` for one chunk under a dense method in the
synthetic collection of ``store_cases`` (``n`` records), after its vectors were read once
(the read is timed and reported apart, with the memory the vectors take); the baseline is
our own top-10 store query on the same collection, which answers only the top. Target:
at most 50 ms a query.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from typing import Any

import numpy as np

from core.bench.inputs import BenchInputs, head_document, shared_dir
from core.bench.report import CaseResult
from core.bench.store_cases import DENSE, SEED, _ensure_scale, _unit_vectors, _with_extra, model_dim
from core.bench.timing import interleaved, timed
from core.chunk import default_policy, policy_from_args
from core.diagnose.attribution import late_attribution
from core.diagnose.casebook import (
    CAUSES,
    KS,
    POLICY,
    build_casebook,
    casebook_documents,
    casebook_queries,
    run_casebook,
)
from core.diagnose.casebook import METHODS as BOOK_METHODS
from core.diagnose.depth import full_depth_ranks, loaded_vectors
from core.diagnose.run_failures import diagnose_methods, diagnose_run
from core.embed import VectorCache
from core.embed.late import late_windows
from core.evaluate import EvalConfig, import_chunking_eval, run_eval
from core.formats import load_document
from core.methods import BENCHED
from core.methods.embedding import embed_chunks
from core.store import ChunkStore

LEXICAL = BENCHED.lexical

DEPTH_LIMIT_S = 0.050


class _Encoder:
    """Stands in for the model: the benchmark's query vectors, one per round."""

    def __init__(self, name: str, vectors: np.ndarray) -> None:
        self.name, self.vectors, self.step = name, vectors, 0

    def encode_query(self, text: str) -> np.ndarray:
        return np.asarray(self.vectors[int(text)])


def depth_case(inputs: BenchInputs, n: int) -> CaseResult:
    s = inputs.settings
    store = ChunkStore.open(s.cache_dir / "scale")
    model, policy, _ = _ensure_scale(store, inputs.document(s.pdf), n)
    load_s, vectors = timed(lambda: loaded_vectors(store, model=model, method=DENSE, policy=policy))
    if vectors is None:
        raise RuntimeError(f"the synthetic collection of {n:,} records is missing")
    queries = _unit_vectors(2 + s.scale_queries, model_dim(), SEED + 4)
    enc = _Encoder(model, queries)
    target = vectors.ids[len(vectors.ids) // 2]

    def ours(step: int) -> Any:
        found = full_depth_ranks(
            str(step), target, methods=[DENSE], encoder=enc, store=store, policy=policy
        )
        if found[DENSE].rank is None or found[DENSE].scope_size != n:
            raise AssertionError("the chunk has no full-depth rank")
        return found

    def top10(step: int) -> Any:
        return store.query(queries[step], model=model, method=DENSE, policy=policy)

    t = interleaved({"ours": ours, "raw": top10}, warmup=2, repeats=s.scale_queries)
    mib = (vectors.matrix.nbytes + vectors.norms.nbytes) / 2**20  # float64
    row = CaseResult(
        key=f"diagnose:depth:{n}",
        case="depth",
        label=f"full-depth rank of one chunk in {n:,}",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="our top-10 store query",
        max_ours=DEPTH_LIMIT_S,
        target="<= 50 ms",
        notes=(
            f"vectors read once in {load_s:.1f} s and kept: {mib:.0f} MiB for {n:,} chunks "
            f"({mib * 2**20 / n:.0f} bytes each); the rank counts every chunk of the scope",
        ),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )
    return _with_extra(row, {"load_s": load_s, "vectors_mib": mib})


ATTRIBUTION_LIMIT_S = 10.0
ATTRIBUTION_CHARS = 2_600  # cut back until the headline's head fits one late window


def attribution_case(inputs: BenchInputs) -> CaseResult:
    """Context attribution of one chunk whose late window holds about 510 tokens, against
    one late embedding of the same document (a forward pass and a pooling)."""
    s = inputs.settings
    encoder = inputs.encoder()
    chars = ATTRIBUTION_CHARS
    doc = head_document(inputs.document(s.pdf), chars)
    while len(late_windows(doc, encoder)) > 1 and chars > 400:  # the largest single window
        chars -= 100
        doc = head_document(inputs.document(s.pdf), chars)
    chunks = inputs.chunks(doc, (), policy_from_args("fixed", 300, 30, "chars"))
    if not chunks:
        raise RuntimeError("the headline document gave no chunks")
    target = chunks[len(chunks) // 2]
    (window,) = late_windows(doc, encoder)
    query = " ".join(target.text.split()[:6])
    t = interleaved(
        {
            "ours": lambda step: late_attribution(doc, target, query, encoder),
            "raw": lambda step: embed_chunks(doc, chunks, BENCHED.windowed, encoder),
        },
        warmup=1,
        repeats=max(2, s.repeats // 2),
    )
    found = late_attribution(doc, target, query, encoder)
    return CaseResult(
        key="diagnose:attribution",
        case="attribution",
        label=f"{BENCHED.windowed} context attribution, {window.n_tokens}-token window",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label=f"one {BENCHED.windowed} embedding",
        max_ours=ATTRIBUTION_LIMIT_S,
        target="<= 10 s",
        notes=(
            f"{len(found.parts)} sentences hidden in turn ({found.forward_rows} window rows); "
            f"the chunk's full-context cosine is the stored {BENCHED.windowed} vector's",
        ),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


SIGNALS_LIMIT_S = 60.0  # the repairs run too (bm25: scored, nothing embedded)


def signals_case(inputs: BenchInputs) -> CaseResult:
    """The diagnosis of every failure of the shared 472-query set (bm25, fixed 800/100
    characters): its repairs scored and ranked, its evidence read, against the evaluation
    that found them."""
    folder = shared_dir() / "corpus" / "chunking_evaluation"
    docs = {p.stem: load_document(p) for p in sorted((folder / "corpora").glob("*.md"))}
    queries = import_chunking_eval(folder, loader=lambda path: docs[path.stem])
    config = EvalConfig(policy=default_policy("fixed"), methods=(LEXICAL,), ks=(1, 5, 10))
    encoder = inputs.encoder()
    eval_s, run = timed(lambda: run_eval(queries, list(docs.values()), config, encoder=encoder))
    failed = sum(q.failed[LEXICAL] for q in run.queries)
    t = interleaved(
        {
            "ours": lambda step: diagnose_run(run, docs, method=LEXICAL, encoder=encoder),
            "raw": lambda step: run_eval(queries, list(docs.values()), config, encoder=encoder),
        },
        warmup=0,
        repeats=2,
    )
    found = diagnose_run(run, docs, method=LEXICAL, encoder=encoder)
    causes: dict[str, int] = {}
    for diagnosis in found.values():
        causes[diagnosis.suggested] = causes.get(diagnosis.suggested, 0) + 1
    shown = ", ".join(f"{c} {n}" for c, n in sorted(causes.items(), key=lambda kv: -kv[1]))
    return CaseResult(
        key="diagnose:signals",
        case="signals",
        label=f"diagnosis of all {failed} {LEXICAL} failures of {run.n_queries} queries",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label=f"the {LEXICAL} evaluation",
        max_ours=SIGNALS_LIMIT_S,
        target="<= 60 s",
        notes=(f"suggested causes: {shown}; first evaluation {eval_s:.1f} s",),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


COST_FAILURES = 40
COST_LIMIT_S = 60.0


def first_failures(run: Any, n: int) -> Any:
    """The run cut to its first ``n`` failures, a failure being a (query, method) pair
    in the run's order (a query's methods in the run's order): later queries left out,
    the last query's later failed methods marked not failed (so nothing diagnoses them)."""
    import dataclasses

    kept, left = [], n
    for record in run.queries:
        if left <= 0:
            break
        failed = [m for m in run.methods if record.failed.get(m)]
        if len(failed) > left:
            drop = set(failed[left:])
            record = dataclasses.replace(
                record, failed={m: v and m not in drop for m, v in record.failed.items()}
            )
        left -= min(left, len(failed))
        kept.append(record)
    if left:
        raise RuntimeError(f"the run has {n - left} failures, not {n}")
    return dataclasses.replace(run, queries=tuple(kept))


def cost_case(inputs: BenchInputs) -> CaseResult:
    """The diagnosis of the first ``COST_FAILURES`` failures of the casebook's run (every
    method's repairs run: boundary and context texts embedded by the failing method,
    OCR where the text layer differs), against that run's own evaluation, a first one
    (an empty vector cache). One run of each."""
    per_cause = 1 if inputs.settings.quick else PER_CAUSE
    book = build_casebook(per_cause=per_cause)
    docs = casebook_documents(book)
    config = EvalConfig(policy=POLICY, methods=BOOK_METHODS, ks=KS, resamples=10)
    encoder = inputs.encoder()
    with tempfile.TemporaryDirectory(prefix="chunkscope-bench-cost-") as folder:
        eval_s, run = timed(  # a first evaluation: an empty vector cache
            lambda: run_eval(
                casebook_queries(book), docs, config, encoder=encoder, cache=VectorCache(folder)
            )  # fmt: skip
        )
    total = sum(bool(q.failed.get(m)) for q in run.queries for m in run.methods)
    picked = first_failures(run, COST_FAILURES)
    by_id = {d.doc_id: d for d in docs}
    took, found = timed(lambda: diagnose_methods(picked, by_id, encoder=encoder))
    done = sum(len(per) for per in found.values())
    if done != COST_FAILURES:
        raise AssertionError(f"{done} failures were diagnosed, not {COST_FAILURES}")
    per_method = ", ".join(f"{m} {len(found[m])}" for m in run.methods if found.get(m))
    tried = Counter(e.repair for per in found.values() for d in per.values() for e in d.experiments)
    return CaseResult(
        key="diagnose:cost",
        case="diagnose",
        label=f"diagnosis of {COST_FAILURES} failures of a run, repairs run (one run)",
        ours=took,
        baseline=eval_s,
        baseline_label=f"the run's first evaluation ({run.n_queries} queries, {len(docs)} docs)",
        max_ours=COST_LIMIT_S,
        target=f"<= {COST_LIMIT_S:.0f} s",
        notes=(
            f"the first {COST_FAILURES} of the casebook run's {total} failures ({per_method}); "
            f"experiments: {dict(sorted(tried.items()))}",
        ),
        extra={"failures": COST_FAILURES, "run_failures": total, "eval_s": eval_s},
    )


AGREEMENT_TARGET = 0.8  # of every failure of the casebook
CAUSE_TARGET = 0.6  # of each cause's failures
HELD_OUT_TARGET = 0.8  # of every failure of the held-out families (no threshold set on them)
HELD_OUT_CAUSE_TARGET = 0.6
PER_CAUSE = 3  # cases per (family, cause); --quick: 1


def agreement_cases(inputs: BenchInputs) -> list[CaseResult]:
    """The diagnosis against causes known by construction (``core.diagnose.casebook``):
    one row for the overall disagreement (target <= 20 %), one per cause (<= 40 %), the
    confusion matrix in the notes and the ``extra`` record; then the same rows for the
    held-out families (``held_out``: other domains and wordings, their own seed, never
    used to set a threshold), with their own targets. Ours is the share of failures
    whose suggestion differs from the constructed cause; the baseline, the share a
    suggestion drawn by the failures' own cause frequencies would miss (a guess that
    knows the mix)."""
    per_cause = 1 if inputs.settings.quick else PER_CAUSE
    tuned = build_casebook(per_cause=per_cause)
    held = build_casebook(per_cause=per_cause, held_out=True)
    return [
        *_agreement_rows(inputs, tuned, "diagnose:agreement", "", per_cause,
                         AGREEMENT_TARGET, CAUSE_TARGET),
        *_agreement_rows(inputs, held, "diagnose:held-out", "held out, ", per_cause,
                         HELD_OUT_TARGET, HELD_OUT_CAUSE_TARGET),
    ]  # fmt: skip


def _agreement_rows(
    inputs: BenchInputs, book: Any, key: str, which: str, per_cause: int, target: float,
    cause_target: float,
) -> list[CaseResult]:  # fmt: skip

    took, (run, found, agreement) = timed(lambda: run_casebook(book, inputs.encoder()))
    total = agreement.total or 1
    sizes = {c: sum(agreement.matrix[c].values()) for c in CAUSES}
    guess = 1.0 - sum((n / total) ** 2 for n in sizes.values())
    matrix = {c: dict(row) for c, row in agreement.matrix.items()}
    families = len({q.family for q in book.queries})
    notes = (
        f"{len(book.queries)} queries on {len(book.sources)} invented documents "
        f"({which}{families} families x 6 causes x {per_cause}); {agreement.total} failures "
        f"judged, {agreement.not_failed} queries did not fail, {agreement.set_apart} set "
        f"apart; confidence {dict(agreement.confidence)}; {took:.0f} s",
        *agreement.table().splitlines(),
    )
    rows = [
        CaseResult(
            key=key, case="diagnose", unit="share",
            label=f"suggestion differs from the constructed cause ({which}all failures)",
            ours=1.0 - agreement.overall, baseline=guess,
            baseline_label="a guess by the causes' frequencies", max_ours=1 - target,
            target=f"<= {1 - target:.0%} (agreement >= {target:.0%})",
            notes=notes, extra={"matrix": matrix, "agreed": agreement.agreed,
                                "total": agreement.total, "seconds": took},
        )
    ]  # fmt: skip
    for cause, share in agreement.per_cause().items():
        rows.append(
            CaseResult(
                key=f"{key}:{cause}", case="diagnose", unit="share",
                label=f"suggestion differs, {which}{cause} failures ({sizes[cause]})",
                ours=None if share is None else 1.0 - share,
                baseline=1.0 - sizes[cause] / total if sizes[cause] else None,
                baseline_label="a guess by the causes' frequencies",
                max_ours=1 - cause_target, target=f"<= {1 - cause_target:.0%}",
                skipped=None if share is not None else "no failure of this cause",
            )
        )  # fmt: skip
    return rows
