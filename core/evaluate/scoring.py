"""Score every query against every chunk of an evaluation's corpus under each method, rank,
and score the rankings (see ``core.evaluate.runner`` for what the scores are)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core import methods as registry
from core.embed import encode_queries
from core.evaluate.corpus import Corpus
from core.evaluate.metrics import MetricSpec, first_relevant_rank, query_metrics
from core.evaluate.resolve import ResolvedQuery
from core.evaluate.run_file import RankedHit
from core.protocols import RecordsFn, TextEncoder

if TYPE_CHECKING:
    from core.embed.cache import VectorCache

Progress = Callable[[int, int], None]
EmbedFn = RecordsFn


def records_of(
    corpus: Corpus,
    method: str,
    encoder: TextEncoder,
    embed: EmbedFn,
    cache: VectorCache | None,
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
class Scorer:
    """Score matrices ``(n_queries, n_chunks)`` per method, each part computed once."""

    corpus: Corpus
    queries: list[str]
    encoder: TextEncoder
    embed: EmbedFn
    cache: VectorCache | None
    ticker: Ticker
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
        records = records_of(
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
            self.query_matrix = encode_queries(self.encoder, self.queries, self.cache)
        matrix = np.vstack([np.asarray(r.vector, dtype=np.float32) for r in records])
        return self.query_matrix @ matrix.T


class Ticker:
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


def rank_rows(scores: np.ndarray, allowed: np.ndarray | None, depth: int) -> list[np.ndarray]:
    """Per query, chunk indices best first (stable on ties), cut at ``depth``."""
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    out = []
    for row, picked in enumerate(order):
        keep = np.isfinite(scores[row, picked])
        out.append(picked[keep])
    return out


def gold_masks(queries: Sequence[ResolvedQuery], corpus: Corpus) -> list[np.ndarray]:
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
class Scored:
    """One query under one method: its ranked hits, metric values and first gold rank."""

    hits: tuple[RankedHit, ...]
    values: dict[str, float | None]
    rank: int | None
    full_rank: int | None = None  # the best gold chunk's rank at full depth
    scope_size: int = 0  # the chunks this query was ranked among


def allowed_mask(
    resolved: Sequence[ResolvedQuery], corpus: Corpus, scope: str
) -> np.ndarray | None:
    """``(n_queries, n_chunks)`` mask of the chunks each query may rank (None: all)."""
    if scope != "doc":
        return None
    position = {doc.doc_id: i for i, (doc, _) in enumerate(corpus.chunks_by_doc)}
    wanted = np.array([position[q.doc_id] for q in resolved], dtype=np.int64)
    return corpus.doc_index[None, :] == wanted[:, None]


def _full_goldrank_rows(
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


def score_method(
    resolved: Sequence[ResolvedQuery],
    corpus: Corpus,
    scores: np.ndarray,
    allowed: np.ndarray | None,
    spec: MetricSpec,
) -> list[Scored]:
    """Rank every query by one method's score matrix and score the ranking."""
    masks = gold_masks(resolved, corpus)
    relevant = [int(m.sum()) for m in masks]
    out = []
    for row, picked in enumerate(rank_rows(scores, allowed, spec.depth)):
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
        full, size = _full_goldrank_rows(
            scores[row], None if allowed is None else allowed[row], masks[row]
        )
        first = first_relevant_rank(ranked, query.doc_id, gold)
        out.append(Scored(hits, values, first, full, size))
    return out
