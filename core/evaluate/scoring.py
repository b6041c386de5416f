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
from core.methods.lexical import Bm25Index, indexed_text
from core.protocols import RecordsFn, TextEncoder
from core.retrieve.ranking import MemoryRanker

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
    """Score matrices ``(n_queries, n_chunks)`` per stored method, each computed once (a
    fusion is made per query from its parts' rows, by the ranker)."""

    corpus: Corpus
    queries: list[str]
    encoder: TextEncoder
    embed: EmbedFn
    cache: VectorCache | None
    ticker: Ticker
    done: dict[str, np.ndarray]
    query_matrix: np.ndarray | None = None

    def scores(self, method: str) -> np.ndarray:
        if method not in self.done:
            self.done[method] = self._compute(registry.get(method))
        return self.done[method]

    def _compute(self, spec: registry.MethodSpec) -> np.ndarray:
        n_chunks = len(self.corpus.chunks)
        if spec.family == "fused":
            raise ValueError(f"{spec.name} is fused: rank it through its parts")
        records = records_of(
            self.corpus, spec.name, self.encoder, self.embed, self.cache, self.ticker
        )
        if not n_chunks:
            return np.zeros((len(self.queries), 0), dtype=np.float32)
        if spec.family == "lexical":
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


def scope_rows(
    resolved: Sequence[ResolvedQuery], corpus: Corpus, scope: str
) -> list[tuple[int, int]]:
    """Per query, the rows ``[lo, hi)`` of the corpus it is ranked among: every chunk, or
    (``scope="doc"``) its own document's."""
    return [corpus.rows(q.doc_id if scope == "doc" else None) for q in resolved]


def score_method(
    resolved: Sequence[ResolvedQuery],
    corpus: Corpus,
    scorer: Scorer,
    method: str,
    rows: Sequence[tuple[int, int]],
    spec: MetricSpec,
) -> list[Scored]:
    """Rank every query under one method over its rows of the corpus (``scope_rows``),
    through the in-memory ranker Compare's store ranker shares its rules with
    (``core.retrieve.ranking``), and score the ranking."""
    masks = gold_masks(resolved, corpus)
    relevant = [int(m.sum()) for m in masks]
    ids = [c.chunk_id for c in corpus.chunks]
    row_of = {cid: i for i, cid in enumerate(ids)}
    scoped: dict[tuple[int, int], list[str]] = {}
    out = []
    for row, query in enumerate(resolved):
        lo, hi = rows[row]
        in_scope = scoped.setdefault((lo, hi), ids[lo:hi])

        def scores(part: str, row: int = row, lo: int = lo, hi: int = hi) -> np.ndarray:
            return scorer.scores(part)[row, lo:hi]

        def position(chunk_id: str, lo: int = lo, hi: int = hi) -> int | None:
            i = row_of.get(chunk_id, -1)
            return i - lo if lo <= i < hi else None

        ranking = MemoryRanker(in_scope, scores, position).rank(method, spec.depth)
        picked = [row_of[cid] for cid, _, _ in ranking.ranked[: spec.depth]]
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
            RankedHit(chunk_id=cid, rank=rank, score=score)
            for cid, rank, score in ranking.ranked[: spec.depth]
        )
        gold_ranks = [ranking.lookup(in_scope[i]) for i in np.flatnonzero(masks[row][lo:hi])]
        full = min((found[0] for found in gold_ranks if found), default=None)
        first = first_relevant_rank(ranked, query.doc_id, gold)
        out.append(Scored(hits, values, first, full, hi - lo))
    return out
