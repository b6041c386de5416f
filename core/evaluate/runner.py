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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from core import methods as registry
from core.cite import Citation, CitationStatus
from core.errors import LabelError
from core.evaluate.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, DeltaInterval, metric_deltas
from core.evaluate.labels import LabelledQuery
from core.evaluate.metrics import MetricSpec, aggregate, first_relevant_rank, query_metrics
from core.evaluate.resolve import DEFAULT_THRESHOLD, ResolvedQuery, Unresolved, resolve_queries
from core.evaluate.runs import (
    EvalRun,
    QueryRecord,
    RankedHit,
    code_version,
    make_run_id,
    model_fingerprint,
    queries_digest,
)
from core.types import Chunk, ChunkPolicy, Document

Progress = Callable[[int, int], None]
ChunkFn = Callable[[Document], Sequence[Chunk]]
EmbedFn = Callable[..., Sequence[Any]]
SCOPES: tuple[str, ...] = ("corpus", "doc")
# Deltas are "more elaborate minus simpler" (the registry's order): positive means the
# more elaborate method helped.
delta_pairs = registry.delta_pairs


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalConfig:
    """Everything besides the documents, queries and encoder that decides the numbers."""

    policy: ChunkPolicy
    methods: tuple[str, ...] = registry.PAIRED
    ks: tuple[int, ...] = (1, 5, 10)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class _Corpus:
    """Chunks of all documents stacked in ranking order, with per-chunk facts."""

    docs: dict[str, Document]
    chunks_by_doc: list[tuple[Document, list[Chunk]]]
    chunks: list[Chunk]
    doc_index: np.ndarray  # (n_chunks,) index of each chunk's document in chunks_by_doc
    valid: np.ndarray  # (n_chunks,) citation verifies against the loaded document


def default_chunker(policy: ChunkPolicy, tokenizer: Any = None) -> ChunkFn:
    """Parse with the default parser, then chunk with ``policy``."""
    from core.chunk import chunk_document
    from core.parse import parse_document

    def chunks_of(doc: Document) -> Sequence[Chunk]:
        return chunk_document(doc, parse_document(doc).blocks, policy, tokenizer=tokenizer)

    return chunks_of


def _build_corpus(docs: Sequence[Document], chunker: ChunkFn) -> _Corpus:
    by_id: dict[str, Document] = {}
    for doc in docs:
        if doc.doc_id in by_id:
            raise LabelError(f"two documents share the id {doc.doc_id!r}: rename one file")
        by_id[doc.doc_id] = doc
    chunks_by_doc = [(by_id[i], list(chunker(by_id[i]))) for i in sorted(by_id)]
    for _, chunks in chunks_by_doc:
        chunks.sort(key=lambda c: (c.char_start, c.char_end))
    flat = [c for _, chunks in chunks_by_doc for c in chunks]
    doc_index = np.array(
        [i for i, (_, chunks) in enumerate(chunks_by_doc) for _ in chunks], dtype=np.int64
    )
    valid = np.array(
        [Citation.of_chunk(c).verify(by_id.get(c.doc_id)) is CitationStatus.OK for c in flat],
        dtype=bool,
    )
    return _Corpus(
        docs=by_id, chunks_by_doc=chunks_by_doc, chunks=flat, doc_index=doc_index, valid=valid
    )


def _records_of(
    corpus: _Corpus,
    method: str,
    encoder: object,
    embed: EmbedFn,
    cache: object,
    tick: Callable[[int], Progress],
) -> list[Any]:
    """One stored method's records (vectors, prefixes) for every chunk, in corpus order."""
    rows: list[Any] = []
    for doc, chunks in corpus.chunks_by_doc:
        if not chunks:
            continue
        records = embed(doc, chunks, method, encoder, progress=tick(len(chunks)), cache=cache)
        by_id = {r.chunk_id: r for r in records}
        rows.extend(by_id[c.chunk_id] for c in chunks)
    return rows


@dataclass(slots=True)
class _Scorer:
    """Score matrices ``(n_queries, n_chunks)`` per method, each part computed once."""

    corpus: _Corpus
    queries: list[str]
    encoder: Any
    embed: EmbedFn
    cache: object
    ticker: _Ticker
    allowed: np.ndarray | None
    done: dict[str, np.ndarray]
    query_matrix: np.ndarray | None = None

    def scores(self, method: str) -> np.ndarray:
        if method not in self.done:
            self.done[method] = self._compute(registry.get(method))
        return self.done[method]

    def _compute(self, spec: registry.MethodSpec) -> np.ndarray:
        n_chunks = len(self.corpus.chunks)
        if spec.family == "fused":
            from core.methods.fusion import fuse_matrices

            parts = [self.scores(p) for p in spec.parts]
            return fuse_matrices(spec, parts, self.allowed)
        records = _records_of(
            self.corpus, spec.name, self.encoder, self.embed, self.cache, self.ticker
        )
        if not n_chunks:
            return np.zeros((len(self.queries), 0), dtype=np.float32)
        if spec.family == "lexical":
            from core.methods.lexical import Bm25Index, indexed_text

            texts = [
                indexed_text(r.prefix, c.text)
                for r, c in zip(records, self.corpus.chunks, strict=True)
            ]
            return Bm25Index.build(texts).score_matrix(self.queries)
        if self.query_matrix is None:
            encoded = self.encoder.encode_texts(self.queries)
            self.query_matrix = np.asarray(encoded, dtype=np.float32)
        matrix = np.vstack([np.asarray(r.vector, dtype=np.float32) for r in records])
        return self.query_matrix @ matrix.T


class _Ticker:
    """Maps each embed call's own progress onto one bar over all (method, chunk) units."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.progress, self.offset = total, progress, 0

    def __call__(self, units: int) -> Progress:
        start = self.offset
        self.offset += units

        def report(done: int, total: int) -> None:
            if self.progress is not None and total > 0:
                self.progress(start + round(units * min(done, total) / total), self.total)

        return report


def _rank(scores: np.ndarray, allowed: np.ndarray | None, depth: int) -> list[np.ndarray]:
    """Per query, chunk indices best first (stable on ties), cut at ``depth``."""
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    out = []
    for row, picked in enumerate(order):
        keep = np.isfinite(scores[row, picked])
        out.append(picked[keep])
    return out


def _gold_masks(queries: Sequence[ResolvedQuery], corpus: _Corpus) -> list[np.ndarray]:
    """Per query, which chunks of the whole corpus overlap one of its gold spans."""
    starts = np.array([c.char_start for c in corpus.chunks], dtype=np.int64)
    ends = np.array([c.char_end for c in corpus.chunks], dtype=np.int64)
    doc_ids = np.array([c.doc_id for c in corpus.chunks], dtype=object)
    masks = []
    for query in queries:
        hit = np.zeros(len(corpus.chunks), dtype=bool)
        for gold in query.gold:
            hit |= (starts < gold.char_end) & (gold.char_start < ends)
        masks.append(hit & (doc_ids == query.doc_id))
    return masks


@dataclass(frozen=True, slots=True)
class _Scored:
    """One query under one method: its ranked hits, metric values and first gold rank."""

    hits: tuple[RankedHit, ...]
    values: dict[str, float | None]
    rank: int | None
    full_rank: int | None = None  # the best gold chunk's rank at full depth
    scope_size: int = 0  # the chunks this query was ranked among


def _allowed(resolved: Sequence[ResolvedQuery], corpus: _Corpus, scope: str) -> np.ndarray | None:
    """``(n_queries, n_chunks)`` mask of the chunks each query may rank (None: all)."""
    if scope != "doc":
        return None
    position = {doc.doc_id: i for i, (doc, _) in enumerate(corpus.chunks_by_doc)}
    wanted = np.array([position[q.doc_id] for q in resolved], dtype=np.int64)
    return corpus.doc_index[None, :] == wanted[:, None]


def _full_gold_rank(
    scores: np.ndarray, allowed: np.ndarray | None, gold: np.ndarray
) -> tuple[int | None, int]:
    """``(rank of the best gold chunk at full depth, chunks ranked)`` for one query row:
    better scores, then equal ones earlier in corpus order, as ``_rank`` orders them."""
    row = np.where(allowed, scores, -np.inf) if allowed is not None else scores
    size = int(np.isfinite(row).sum()) if allowed is not None else len(row)
    candidates = np.flatnonzero(gold & np.isfinite(row))
    if not len(candidates):
        return None, size
    best = candidates[np.argmax(row[candidates])]  # argmax keeps the earliest of equals
    s = row[best]
    return int((row > s).sum() + (row[:best] == s).sum()) + 1, size


def _score_method(
    resolved: Sequence[ResolvedQuery],
    corpus: _Corpus,
    scores: np.ndarray,
    allowed: np.ndarray | None,
    spec: MetricSpec,
) -> list[_Scored]:
    """Rank every query by one method's score matrix and score the ranking."""
    masks = _gold_masks(resolved, corpus)
    relevant = [int(m.sum()) for m in masks]
    out = []
    for row, picked in enumerate(_rank(scores, allowed, spec.depth)):
        query = resolved[row]
        gold = [(g.char_start, g.char_end) for g in query.gold]
        ranked = [corpus.chunks[i] for i in picked]
        values = query_metrics(
            ranked,
            gold_doc=query.doc_id,
            gold=gold,
            n_relevant=relevant[row],
            spec=spec,
            valid=corpus.valid[picked].tolist(),
        )
        hits = tuple(
            RankedHit(chunk_id=corpus.chunks[i].chunk_id, rank=r, score=float(scores[row, i]))
            for r, i in enumerate(picked, start=1)
        )
        full, size = _full_gold_rank(
            scores[row], None if allowed is None else allowed[row], masks[row]
        )
        first = first_relevant_rank(ranked, query.doc_id, gold)
        out.append(_Scored(hits, values, first, full, size))
    return out


def run_eval(
    queries: Sequence[LabelledQuery],
    docs: Sequence[Document],
    config: EvalConfig,
    *,
    encoder: Any,
    embed: EmbedFn | None = None,
    chunker: ChunkFn | None = None,
    cache: object = None,
    progress: Progress | None = None,
) -> EvalRun:
    """Evaluate ``queries`` over ``docs``; see the module docstring.

    ``encoder`` needs ``encode_texts(texts) -> (n, dim)`` and ``name``; ``embed`` (the
    records of one stored method) defaults to ``core.index.method_records`` (each method's
    registered index step) and ``chunker`` to the default parser plus
    ``config.policy`` (both are seams for tests and for other pipelines). ``progress``
    gets ``(done, total)`` over all chunks times methods while embedding. Queries that do
    not resolve are listed in ``EvalRun.unresolved``; if none resolves, ``LabelError``.
    """
    clock = {"start": time.perf_counter()}
    version = code_version()  # the code that runs, even if the tree changes meanwhile
    resolved, unresolved = resolve_queries(queries, docs, threshold=config.threshold)
    if not resolved:
        raise LabelError(
            "no query could be resolved against the given documents: check that --docs "
            "holds the documents the queries name"
        )
    corpus = _build_corpus(docs, chunker or default_chunker(config.policy))
    clock["chunked"] = time.perf_counter()
    spec = MetricSpec.for_ks(config.ks, doc_level=config.scope == "corpus" and len(docs) > 1)
    if embed is None:
        from core.index import method_records

        embed = method_records
    stored = registry.needs_indexing(config.methods)
    allowed = _allowed(resolved, corpus, config.scope)
    scorer = _Scorer(
        corpus=corpus,
        queries=[q.query.query for q in resolved],
        encoder=encoder,
        embed=embed,
        cache=cache,
        ticker=_Ticker(len(corpus.chunks) * len(stored), progress),
        allowed=allowed,
        done={},
    )
    for method in stored:  # every index step first, so "embedded" times the encoder alone
        scorer.scores(method)
    clock["embedded"] = time.perf_counter()
    scored = {
        m: _score_method(resolved, corpus, scorer.scores(m), allowed, spec) for m in config.methods
    }
    clock["ranked"] = time.perf_counter()
    return _finish(
        queries, resolved, unresolved, corpus, scored, spec, config, encoder, clock, version
    )


def _finish(
    queries: Sequence[LabelledQuery],
    resolved: Sequence[ResolvedQuery],
    unresolved: Sequence[Unresolved],
    corpus: _Corpus,
    scored: dict[str, list[_Scored]],
    spec: MetricSpec,
    config: EvalConfig,
    encoder: Any,
    clock: dict[str, float],
    version: str,
) -> EvalRun:
    """Means, deltas and records assembled into the run."""
    records = _records(resolved, scored, spec)
    identity = _identity(config, spec, encoder, corpus, queries)
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
        policy=config.policy.to_dict() | {"key": config.policy.key},
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
    resolved: Sequence[ResolvedQuery], scored: dict[str, list[_Scored]], spec: MetricSpec
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
                failed={m: not rows[i].values[f"hit@{spec.text_k}"] for m, rows in scored.items()},
                metrics={m: rows[i].values for m, rows in scored.items()},
                top={m: rows[i].hits for m, rows in scored.items()},
                full_ranks={m: rows[i].full_rank for m, rows in scored.items()},
                scope_size=next(iter(scored.values()))[i].scope_size,
            )
        )
    return out


def _deltas(
    scored: dict[str, list[_Scored]], spec: MetricSpec, config: EvalConfig
) -> dict[str, dict[str, DeltaInterval | None]]:
    rows = {m: [s.values for s in found] for m, found in scored.items()}
    return {
        f"{b}-{a}": metric_deltas(
            rows[a], rows[b], spec.names(), resamples=config.resamples, seed=config.seed
        )
        for a, b in registry.delta_pairs(config.methods)
    }


def _shown_chunks(records: Sequence[QueryRecord], corpus: _Corpus) -> dict[str, Citation]:
    shown = {h.chunk_id for r in records for hits in r.top.values() for h in hits}
    return {c.chunk_id: Citation.of_chunk(c) for c in corpus.chunks if c.chunk_id in shown}


def _identity(
    config: EvalConfig,
    spec: MetricSpec,
    encoder: Any,
    corpus: _Corpus,
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
