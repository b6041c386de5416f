"""Run an evaluation: chunk every document once, index the chunks once per stored method,
score every query against every chunk, rank, score the ranking.

Scores are exact and in memory, not the Chroma index, so the numbers describe chunking
and the methods, not an approximate index: a dense method's cosine (vectors are
L2-normalised, so one matrix product), a lexical method's BM25 over the whole corpus's
statistics (``core.methods.lexical``), a fusion of its parts' full rankings
(``core.methods.fusion``). The methods come from the registry (``core.methods``).
Chunks are stacked in a fixed order (documents by ``doc_id``, chunks by offset) and ties
keep that order (stable sort), so rankings never depend on the order of ``docs``.

``scope="corpus"`` ranks every chunk of every document for each query (gold is identified
by document and span); ``scope="doc"`` ranks only the query's own document. A query keeps
the top ``spec.depth`` chunks (the largest k, and at least 10 for nDCG@10): its rank is
``None`` when no gold-overlapping chunk is that deep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core import defaults
from core import methods as registry
from core.chunk import chunk_document, policy_registry
from core.embed.cache import shared_cache
from core.errors import LabelError
from core.evaluate.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, DeltaInterval, metric_deltas
from core.evaluate.corpus import ChunkFn, Corpus, build_corpus
from core.evaluate.labels import LabelledQuery
from core.evaluate.metrics import MetricSpec, aggregate
from core.evaluate.resolve import DEFAULT_THRESHOLD, ResolvedQuery, Unresolved, resolve_queries
from core.evaluate.run_file import (
    EvalRun,
    QueryRecord,
    code_version,
    make_run_id,
    model_fingerprint,
    queries_digest,
)
from core.evaluate.scoring import EmbedFn, Scored, Scorer, Ticker, scope_rows, score_method
from core.formats import parse_document
from core.index.indexer import method_records
from core.provenance.cite import Citation
from core.provenance.types import Chunk, ChunkPolicy, Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.protocols import TextEncoder

Progress = Callable[[int, int], None]
# A method ranked from outside: every resolved query's ``Scored``, in order.
GivenRanking = Callable[[Sequence[ResolvedQuery], Corpus, MetricSpec], list[Scored]]
SCOPES: tuple[str, ...] = ("corpus", "doc")
# Deltas are "more elaborate minus simpler" (the registry's order): positive means the
# more elaborate method helped.
delta_pairs = registry.delta_pairs


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalConfig:
    """Everything besides the documents, queries and encoder that decides the numbers."""

    policy: ChunkPolicy
    methods: tuple[str, ...] = defaults.METHODS
    ks: tuple[int, ...] = defaults.KS
    scope: str = "corpus"
    threshold: float = DEFAULT_THRESHOLD
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if not self.methods or len(set(self.methods)) != len(self.methods):
            raise ValueError("methods must be a non-empty list without repeats")
        object.__setattr__(self, "methods", registry.parse_methods(self.methods))
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
        MetricSpec.for_ks(self.ks, doc_level=False)


def default_chunker(policy: ChunkPolicy, tokenizer: Any = None) -> ChunkFn:
    """Parse with the default parser, then chunk with ``policy``."""

    def chunks_of(doc: Document) -> Sequence[Chunk]:
        return chunk_document(doc, parse_document(doc).blocks, policy, tokenizer=tokenizer)

    return chunks_of


def run_eval(
    queries: Sequence[LabelledQuery],
    docs: Sequence[Document],
    config: EvalConfig,
    *,
    encoder: TextEncoder,
    embed: EmbedFn | None = None,
    chunker: ChunkFn | None = None,
    cache: VectorCache | None = None,
    progress: Progress | None = None,
    given: Mapping[str, GivenRanking] | None = None,
    identity: Mapping[str, object] | None = None,
) -> EvalRun:
    """Evaluate ``queries`` over ``docs``; see the module docstring.

    ``encoder`` needs ``encode_texts(texts) -> (n, dim)`` and ``name``; ``embed`` (the
    records of one stored method) defaults to ``core.index.indexer.method_records`` (each method's
    registered index step) and ``chunker`` to the default parser plus
    ``config.policy`` (both are seams for tests and for other pipelines). ``progress``
    gets ``(done, total)`` over all chunks times methods while embedding. Queries that do
    not resolve are listed in ``EvalRun.unresolved``; if none resolves, ``LabelError``.
    ``cache`` defaults to the one on-disk cache (``core.embed.cache.shared_cache``), so a
    second run of the same evaluation, in any process, encodes nothing.
    ``given`` ranks the methods it names itself (an external retriever's logged hits,
    ``core.evaluate.imported_run``) instead of scoring them; ``identity`` adds what else
    decides their numbers (the log's digest) to the run id.
    """
    clock = {"start": time.perf_counter()}
    if cache is None:
        cache = shared_cache()
    version = code_version()  # the code that runs, even if the tree changes meanwhile
    resolved, unresolved = resolve_queries(queries, docs, threshold=config.threshold)
    if not resolved:
        raise LabelError(
            "no query could be resolved against the given documents: check that --docs "
            "holds the documents the queries name"
        )
    corpus = build_corpus(docs, chunker or default_chunker(config.policy))
    clock["chunked"] = time.perf_counter()
    spec = MetricSpec.for_ks(config.ks, doc_level=config.scope == "corpus" and len(docs) > 1)
    if embed is None:
        embed = method_records
    stored = registry.needs_indexing(config.methods)
    rows = scope_rows(resolved, corpus, config.scope)
    scorer = Scorer(
        corpus=corpus,
        queries=[q.query.query for q in resolved],
        encoder=encoder,
        embed=embed,
        cache=cache,
        ticker=Ticker(len(corpus.chunks) * len(stored), progress),
        done={},
    )
    for method in stored:  # every index step first, so "embedded" times the encoder alone
        scorer.scores(method)
    clock["embedded"] = time.perf_counter()
    scored = {
        m: given[m](resolved, corpus, spec)
        if given and m in given
        else score_method(resolved, corpus, scorer, m, rows, spec)
        for m in config.methods
    }
    clock["ranked"] = time.perf_counter()
    return _finish(
        queries, resolved, unresolved, corpus, scored, spec, config, encoder, clock, version,
        dict(identity or {}),
    )  # fmt: skip


def _finish(
    queries: Sequence[LabelledQuery],
    resolved: Sequence[ResolvedQuery],
    unresolved: Sequence[Unresolved],
    corpus: Corpus,
    scored: dict[str, list[Scored]],
    spec: MetricSpec,
    config: EvalConfig,
    encoder: Any,
    clock: dict[str, float],
    version: str,
    extra: dict[str, object],
) -> EvalRun:
    """Means, deltas and records assembled into the run."""
    records = _records(resolved, scored, spec)
    identity = _identity(config, spec, encoder, corpus, queries) | extra
    metrics: dict[str, dict[str, float | None]] = {}
    counts: dict[str, dict[str, int]] = {}
    for method in config.methods:
        metrics[method], counts[method] = aggregate(
            [s.values for s in scored[method]], spec.names()
        )
    clock["done"] = time.perf_counter()
    return EvalRun(
        run_id=make_run_id(identity),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        model=str(encoder.name),
        policy=config.policy.to_dict() | {"key": config.policy.key} | _label(config.policy),
        methods=config.methods,
        ks=spec.ks,
        text_k=spec.text_k,
        depth=spec.depth,
        scope=config.scope,
        threshold=config.threshold,
        seed=config.seed,
        resamples=config.resamples,
        corpus=identity["corpus"],
        queries_sha256=identity["queries_sha256"],
        code_version=version,
        metrics=metrics,
        n=counts,
        deltas=_deltas(scored, spec, config),
        unresolved=tuple(unresolved),
        queries=tuple(records),
        chunks=_shown_chunks(records, corpus),
        timings=_timings(clock),
    )


def _records(
    resolved: Sequence[ResolvedQuery], scored: dict[str, list[Scored]], spec: MetricSpec
) -> list[QueryRecord]:
    out = []
    for i, query in enumerate(resolved):
        out.append(
            QueryRecord(
                id=query.query.id,
                query=query.query.query,
                doc_id=query.doc_id,
                doc_sha256=query.doc_sha256,
                gold=query.gold,
                ranks={m: rows[i].rank for m, rows in scored.items()},
                failed={m: _failed(rows[i], spec.text_k) for m, rows in scored.items()},
                metrics={m: rows[i].values for m, rows in scored.items()},
                top={m: rows[i].hits for m, rows in scored.items()},
                full_ranks={m: rows[i].full_rank for m, rows in scored.items()},
                scope_size=max(rows[i].scope_size for rows in scored.values()),  # not a log's
            )
        )
    return out


def _label(policy: ChunkPolicy) -> dict[str, object]:
    """An imported chunk set (fixed boundaries) is named by its name, not a size key."""
    spec = policy_registry.find(policy.name)
    return {"label": policy.name} if spec is not None and spec.fixed_boundaries else {}


def _failed(row: Scored, text_k: int) -> bool:
    """No gold in the top ``text_k``; where hit@text_k is n/a (past a log's depth), no gold
    in what the log holds."""
    hit = row.values.get(f"hit@{text_k}")
    if hit is None:
        return row.rank is None or row.rank > text_k
    return not hit


def _deltas(
    scored: dict[str, list[Scored]], spec: MetricSpec, config: EvalConfig
) -> dict[str, dict[str, DeltaInterval | None]]:
    rows = {m: [s.values for s in found] for m, found in scored.items()}
    return {
        f"{b}-{a}": metric_deltas(
            rows[a], rows[b], spec.names(), resamples=config.resamples, seed=config.seed
        )
        for a, b in registry.delta_pairs(config.methods)
    }


def _shown_chunks(records: Sequence[QueryRecord], corpus: Corpus) -> dict[str, Citation]:
    shown = {h.chunk_id for r in records for hits in r.top.values() for h in hits}
    return {c.chunk_id: Citation.of_chunk(c) for c in corpus.chunks if c.chunk_id in shown}


def _identity(
    config: EvalConfig,
    spec: MetricSpec,
    encoder: Any,
    corpus: Corpus,
    queries: Sequence[LabelledQuery],
) -> dict[str, Any]:
    """Everything that decides the numbers; its hash is the run id."""
    return {
        "model": str(encoder.name),
        "model_fingerprint": model_fingerprint(encoder),
        "policy": config.policy.to_dict(),
        "methods": list(config.methods),
        "ks": list(spec.ks),
        "scope": config.scope,
        "threshold": config.threshold,
        "seed": config.seed,
        "resamples": config.resamples,
        "corpus": {doc_id: doc.sha256 for doc_id, doc in sorted(corpus.docs.items())},
        "queries_sha256": queries_digest(queries),
    }


def _timings(clock: dict[str, float]) -> dict[str, float]:
    return {
        "chunk_s": round(clock["chunked"] - clock["start"], 3),
        "embed_s": round(clock["embedded"] - clock["chunked"], 3),
        "rank_s": round(clock["ranked"] - clock["embedded"], 3),
        "total_s": round(clock["done"] - clock["start"], 3),
    }
