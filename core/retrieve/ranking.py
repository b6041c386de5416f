"""Rank one scope for one query under one method: one interface, two backends.

A ``Ranker`` ranks the chunks of one scope (one policy's chunks of one model, in one
document or everywhere) for one query: ``size(method)`` counts them, ``rank(method,
depth)`` returns a ``Ranking``. Two backends implement it:

- ``StoreRanker`` reads the store (Compare, the citation pages):
  - dense: within a scope of at most ``EXACT_LIMIT`` chunks every stored vector is read
    and ranked exactly in memory; a larger scope is searched with Chroma's HNSW index to a
    depth of ``ANN_DEPTH`` (a chunk beyond it has its exact cosine but no rank);
  - lexical: the collection's BM25 index scores every chunk of the scope, so every rank is
    exact and full at any scope size;
- ``MemoryRanker`` ranks score vectors already in memory (an evaluation's corpus, a saved
  run's): every rank is exact and full.

Both share what decides an order, so below ``EXACT_LIMIT`` they rank one query alike
(``tests/test_ranking_contract.py``):

- a scope's scores in chunk order become a ranking through ``rank_scores``: best first,
  equal scores in chunk order (document id, then position);
- a fusion becomes a ranking through ``fuse_rankings``, from its parts' rankings with the
  formulas of ``core.methods.fusion``; equal fused scores (two chunks with swapped ranks
  under reciprocal rank fusion) keep chunk order too. A chunk that no part ranked has no
  fused rank.

Beyond ``EXACT_LIMIT`` only the store's dense ranks change: they are HNSW's, to
``ANN_DEPTH``, so a fusion there fuses its dense part's top ``ANN_DEPTH`` only.

A ``Ranking`` keeps the ranked ids to the depth asked and answers ``lookup(chunk_id)``
with ``(rank, score)`` (at full depth where the ranking is exact); its top ``k`` are
hydrated into checked ``StoredHit``s where the backend holds records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from core import methods as registry
from core.methods.fusion import fuse_matrices, fuse_ranked
from core.store.chroma_records import StoredHit
from core.store.lexical_index import lexical_collection

if TYPE_CHECKING:
    from core.methods import MethodSpec
    from core.provenance.types import ChunkPolicy
    from core.store import ChunkStore

EXACT_LIMIT = 5000
ANN_DEPTH = 1000
Ranked = list[tuple[str, int, float]]  # (chunk_id, rank, score), best first
OrderKey = tuple[str, int, int]  # (doc_id, chunk_index, char_start): chunk order


def _no_records(part: Ranked) -> list[StoredHit]:
    return []


@dataclass(slots=True)
class Ranking:
    """One method's ranking of a scope (see the module docstring).

    ``full`` holds ``(ids, scores)`` of the whole scope in chunk order when the ranking was
    made from them (``rank_scores``): a fusion of such rankings over the same ids fuses
    the vectors."""

    method: str
    ranked: Ranked
    size: int
    exact: bool
    hydrate: Callable[[Ranked], list[StoredHit]]
    scores_of: Callable[[list[str]], dict[str, float]]
    finder: Callable[[str], tuple[int, float] | None] | None = None
    # chunk-order keys of some ids: what breaks a tie between parts of a fusion
    order_of: Callable[[list[str]], dict[str, OrderKey]] | None = None
    full: tuple[Sequence[str], np.ndarray] | None = field(default=None, repr=False)
    position: Callable[[str], int | None] | None = field(default=None, repr=False)

    def lookup(self, chunk_id: str) -> tuple[int, float] | None:
        """``(rank, score)`` of a chunk, or None when it lies beyond the depth searched."""
        if self.finder is None:
            table = {cid: (rank, score) for cid, rank, score in self.ranked}
            self.finder = table.get
        return self.finder(chunk_id)

    def top(self, k: int) -> list[StoredHit]:
        return self.hydrate(self.ranked[:k])


class Ranker(Protocol):
    """Ranks one scope for one query (see the module docstring)."""

    def size(self, method: str) -> int:
        """The chunks of the scope under ``method``."""
        ...

    def rank(self, method: str, depth: int) -> Ranking:
        """``method``'s ranking, at least ``depth`` deep where it is not exact in full."""
        ...


# -- shared by both backends -----------------------------------------------------------


def cosines(query_vec: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine of each row with the query, in float64 (a zero row has cosine 0)."""
    mat = np.asarray(matrix, dtype=np.float64)
    query = np.asarray(query_vec, dtype=np.float64).reshape(-1)
    norms = np.linalg.norm(mat, axis=1) * (np.linalg.norm(query) or 1.0)
    return np.divide(mat @ query, norms, out=np.zeros(len(mat)), where=norms > 0)


def rank_in_memory(
    query_vec: np.ndarray, matrix: np.ndarray, ids: Sequence[str]
) -> list[tuple[str, int, float]]:
    """Exact cosine ranking: ``(id, rank, cosine)`` best first, ranks 1-based.

    Ties keep the order of ``ids`` (a stable sort), so pass ids in chunk order.
    """
    if len(ids) != len(matrix):
        raise ValueError(f"{len(ids)} ids for {len(matrix)} rows")
    if not len(ids):
        return []
    found = cosines(query_vec, matrix)
    order = np.argsort(-found, kind="stable")
    return [(ids[i], rank, float(found[i])) for rank, i in enumerate(order, start=1)]


def top_positions(scores: np.ndarray, depth: int) -> np.ndarray:
    """Positions of the ``depth`` best scores, best first, equal scores in position order
    (what a stable sort of the whole vector gives, without sorting all of it)."""
    n = len(scores)
    if depth >= n:
        return np.argsort(-scores, kind="stable")
    positive = np.flatnonzero(scores > 0)
    if depth <= len(positive) < n // 2:  # BM25: most chunks score 0, the top is among the rest
        return positive[top_positions(scores[positive], depth)]
    threshold = np.partition(scores, n - depth)[n - depth]  # the depth-th largest
    above = np.flatnonzero(scores > threshold)
    level = np.flatnonzero(scores == threshold)[: depth - len(above)]
    picked = np.concatenate([above, level])
    return picked[np.lexsort((picked, -scores[picked]))]


def rank_scores(
    method: str,
    ids: Sequence[str],
    scores: np.ndarray,
    depth: int,
    *,
    position: Callable[[str], int | None] | None = None,
    hydrate: Callable[[Ranked], list[StoredHit]] = _no_records,
    order_of: Callable[[list[str]], dict[str, OrderKey]] | None = None,
) -> Ranking:
    """The exact ranking of a scope whose every chunk has a score: ``ids`` and ``scores``
    in chunk order, ranked ``depth`` deep, best first, equal scores in chunk order; every
    chunk of the scope has its full rank through ``lookup``.

    ``position`` finds an id's place in ``ids`` (default: a table built when first
    needed); ``order_of`` gives chunk-order keys for a fusion with rankings of other ids
    (default: the place in ``ids``)."""
    scores = np.asarray(scores)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids for {len(scores)} scores")
    picked = top_positions(scores, max(depth, 1)) if len(scores) else np.zeros(0, np.int64)
    ranked = [(ids[int(i)], rank, float(scores[i])) for rank, i in enumerate(picked, start=1)]
    if position is None:
        table: dict[str, int] = {}

        def position(chunk_id: str) -> int | None:
            if not table:
                table.update((c, i) for i, c in enumerate(ids))
            return table.get(chunk_id)

    where = position

    def find(chunk_id: str) -> tuple[int, float] | None:
        i = where(chunk_id)
        if i is None:
            return None
        s = scores[i]
        return int((scores > s).sum() + (scores[:i] == s).sum()) + 1, float(s)

    def scores_of(wanted: list[str]) -> dict[str, float]:
        found = {c: where(c) for c in wanted}
        return {c: float(scores[i]) for c, i in found.items() if i is not None}

    def places(wanted: list[str]) -> dict[str, OrderKey]:
        found = {c: where(c) for c in wanted}
        return {c: ("", i, 0) for c, i in found.items() if i is not None}

    return Ranking(
        method, ranked, len(ids), True, hydrate, scores_of, find, order_of or places,
        full=(ids, scores), position=where,
    )  # fmt: skip


def fuse_rankings(spec: MethodSpec, parts: Sequence[Ranking], depth: int) -> Ranking:
    """A fusion's ranking from its parts' (see the module docstring).

    Parts made from the same ids' full scores (``MemoryRanker``) are fused as vectors and
    ranked by ``rank_scores``; otherwise each part contributes the ranks it holds (the
    store's parts: in full below ``EXACT_LIMIT``, a dense part's top ``ANN_DEPTH`` beyond)
    and equal fused scores are ordered by the parts' chunk-order keys. Both ways give the
    same fused scores and order when the parts are complete."""
    first = parts[0].full if parts else None
    if first is not None and all(p.full is not None and p.full[0] is first[0] for p in parts):
        vectors = [np.asarray(p.full[1], dtype=float)[None, :] for p in parts if p.full]
        fused_vec = fuse_matrices(spec, vectors)[0]
        return rank_scores(spec.name, first[0], fused_vec, depth, position=parts[0].position)
    tables = [{cid: (rank, score) for cid, rank, score in p.ranked} for p in parts]
    fused = fuse_ranked(spec, tables)
    keys = _tie_order(fused, parts)
    order = sorted(fused, key=lambda c: (-fused[c], keys.get(c, ("\uffff", 0, 0)), c))
    ranked = [(cid, rank, fused[cid]) for rank, cid in enumerate(order, start=1)]

    def hydrate(part: Ranked) -> list[StoredHit]:
        found: dict[str, StoredHit] = {}
        for ranking in parts:
            wanted = [(c, r, s) for c, r, s in part if c not in found and ranking.lookup(c)]
            for hit in ranking.hydrate(wanted) if wanted else []:
                found[hit.chunk_id] = hit
        out = []
        for cid, rank, score in part:
            if cid in found:
                ranks = tuple((p.method, (p.lookup(cid) or (None,))[0]) for p in parts)
                hit = replace(found[cid], score=score, rank=rank, method=spec.name)
                out.append(replace(hit, part_ranks=ranks, matched=()))
        return out

    def scores_of(ids: list[str]) -> dict[str, float]:
        return {c: fused[c] for c in ids if c in fused}

    def order_of(ids: list[str]) -> dict[str, OrderKey]:
        return _tie_order(dict.fromkeys(ids, 0.0), parts)

    exact = all(p.exact and len(p.ranked) == p.size for p in parts)
    size = max((p.size for p in parts), default=0)
    return Ranking(spec.name, ranked, size, exact, hydrate, scores_of, order_of=order_of)


def _tie_order(fused: dict[str, float], parts: Sequence[Ranking]) -> dict[str, OrderKey]:
    """Chunk-order keys of the ids whose fused score another id shares (read from the
    parts' records only for those; an untied id needs none)."""
    count: dict[float, int] = {}
    for score in fused.values():
        count[score] = count.get(score, 0) + 1
    wanted = [c for c, s in fused.items() if count[s] > 1]
    found: dict[str, OrderKey] = {}
    # a lexical part holds its scope's metadata in memory; a dense one reads the store
    for part in sorted(parts, key=lambda p: registry.get(p.method).family != "lexical"):
        missing = [c for c in wanted if c not in found]
        if not missing or part.order_of is None:
            continue
        found.update(part.order_of(missing))
    return found


# -- the store backend -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """What is ranked: one policy's chunks of one model, in one document or everywhere.

    A method's size is counted once per ``Scope`` (a scope lives for one question)."""

    store: ChunkStore
    model: str
    policy: ChunkPolicy
    doc_id: str | None
    counted: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def where(self, method: str) -> dict[str, Any]:
        return {"model": self.model, "method": method, "policy": self.policy}

    def size(self, method: str) -> int:
        spec = registry.get(method)
        if spec.family == "fused":
            return max(self.size(p) for p in spec.parts)
        if method not in self.counted:
            where = self.where(method)
            found = (
                self.store.doc_count(self.doc_id, **where)
                if self.doc_id
                else self.store.count(**where)
            )
            self.counted[method] = found
        return self.counted[method]


def order_key(meta: Any) -> OrderKey:
    """A stored record's place in chunk order, from its metadata."""
    return (str(meta["doc_id"]), int(meta["chunk_index"]), int(meta["char_start"]))


class StoreRanker:
    """The store's backend of ``Ranker`` for one query (``qvec``: its vector, needed by
    dense methods) over one ``Scope``. A ranking is made once per (method, depth): a
    fusion's part ranked as deep as a method asked on its own is that ranking."""

    def __init__(self, scope: Scope, *, query: str, qvec: np.ndarray | None) -> None:
        self.scope, self.query, self.qvec = scope, query, qvec
        self._made: dict[tuple[str, int], Ranking] = {}

    def size(self, method: str) -> int:
        return self.scope.size(method)

    def rank(self, method: str, depth: int) -> Ranking:
        key = (method, depth)
        if key not in self._made:
            self._made[key] = self._rank(method, depth)
        return self._made[key]

    def _rank(self, method: str, depth: int) -> Ranking:
        spec = registry.get(method)
        if spec.family == "fused":  # parts in full where exact ranking is cheap, else deep
            parts = []
            for part in spec.parts:
                size = self.size(part)
                deep = size if size <= EXACT_LIMIT else max(depth, ANN_DEPTH)
                parts.append(self.rank(part, deep))
            return fuse_rankings(spec, parts, depth)
        if spec.family == "lexical":
            return self._lexical(method, depth)
        if self.qvec is None:
            raise ValueError(f"{method} is dense: it needs the query vector")
        return self._dense(method, depth, self.qvec)

    def _dense(self, method: str, depth: int, qvec: np.ndarray) -> Ranking:
        scope, store = self.scope, self.scope.store
        where = scope.where(method)
        size = scope.size(method)

        def hydrate(part: Ranked) -> list[StoredHit]:
            recs = store.scope_records(ids=[cid for cid, _, _ in part], **where)
            row_of = {cid: row for row, cid in enumerate(recs.ids)}
            return [recs.hit(row_of[c], score=s, rank=r) for c, r, s in part if c in row_of]

        def order_of(ids: list[str]) -> dict[str, OrderKey]:
            recs = store.scope_records(ids=ids, **where) if ids else None
            if recs is None:
                return {}
            return {c: order_key(m) for c, m in zip(recs.ids, recs.metadatas, strict=True)}

        if size <= EXACT_LIMIT:
            ids, matrix = store.scope_vectors(doc_id=scope.doc_id, **where)
            found = cosines(qvec, matrix) if len(ids) else np.zeros(0)
            ids, found = _in_chunk_order(list(ids), found, order_of)
            return rank_scores(method, ids, found, depth, hydrate=hydrate, order_of=order_of)
        near = store.nearest(qvec, n=min(size, max(depth, ANN_DEPTH)), doc_id=scope.doc_id, **where)
        ranked = [(cid, rank, cos) for rank, (cid, cos) in enumerate(near, start=1)]

        def scores_of(ids: list[str]) -> dict[str, float]:
            if not ids:
                return {}
            recs = store.scope_records(ids=ids, **where)
            return dict(zip(recs.ids, cosines(qvec, recs.matrix).tolist(), strict=True))

        exact = len(ranked) == size
        return Ranking(method, ranked, size, exact, hydrate, scores_of, order_of=order_of)

    def _lexical(self, method: str, depth: int) -> Ranking:
        scope, query = self.scope, self.query
        col = lexical_collection(scope.store, model=scope.model, method=method, policy=scope.policy)
        if col is None:
            return rank_scores(method, (), np.zeros(0), depth)
        lo, hi = col.rows(scope.doc_id)
        scores = col.index.scores(query)[lo:hi] if hi > lo else np.zeros(0, np.float32)

        def position(chunk_id: str) -> int | None:
            row = col.row_of.get(chunk_id)
            return None if row is None or not lo <= row < hi else row - lo

        def hydrate(part: Ranked) -> list[StoredHit]:
            return [col.hit(col.row_of[c], score=s, rank=r, query=query) for c, r, s in part]

        def order_of(ids: list[str]) -> dict[str, OrderKey]:
            rows = {c: col.row_of.get(c) for c in ids}
            return {c: order_key(col.metadatas[r]) for c, r in rows.items() if r is not None}

        ids = col.ids if (lo, hi) == (0, len(col.ids)) else col.ids[lo:hi]
        return rank_scores(
            method, ids, scores, depth, position=position, hydrate=hydrate, order_of=order_of
        )


def _in_chunk_order(
    ids: list[str], scores: np.ndarray, order_of: Callable[[list[str]], dict[str, OrderKey]]
) -> tuple[list[str], np.ndarray]:
    """A scope read in the store's order, put in chunk order where that decides a tie: the
    records of tied ids only are read (an untied scope is returned as it is)."""
    if len(scores) < 2:
        return ids, scores
    ordered = np.sort(scores)
    if not (ordered[1:] == ordered[:-1]).any():
        return ids, scores
    level = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    tied = sorted(c for c, s in zip(ids, scores.tolist(), strict=True) if s in level)
    key = order_of(tied)
    order = sorted(range(len(ids)), key=lambda i: key.get(ids[i], ("", -1, -1)))
    return [ids[i] for i in order], scores[order]


# -- the in-memory backend -------------------------------------------------------------


class MemoryRanker:
    """The in-memory backend of ``Ranker`` for one query: ``ids`` are the scope's chunks
    in chunk order and ``scores(method)`` the query's score of each, in that order, under
    a stored (dense or lexical) method; a fusion is made from its parts. Every rank is
    exact and full. ``position`` finds an id's place in ``ids`` (default: a table built
    when first needed, once per method)."""

    def __init__(
        self,
        ids: Sequence[str],
        scores: Callable[[str], np.ndarray],
        position: Callable[[str], int | None] | None = None,
    ) -> None:
        self.ids, self._scores, self._position = ids, scores, position
        self._made: dict[str, Ranking] = {}

    def size(self, method: str) -> int:
        return len(self.ids)

    def rank(self, method: str, depth: int) -> Ranking:
        spec = registry.get(method)
        if spec.family == "fused":
            parts = [self._part(p, depth) for p in spec.parts]
            return fuse_rankings(spec, parts, depth)
        return self._part(method, depth)

    def _part(self, method: str, depth: int) -> Ranking:
        made = self._made.get(method)
        if made is None or len(made.ranked) < min(depth, len(self.ids)):
            made = rank_scores(
                method, self.ids, self._scores(method), depth, position=self._position
            )
            self._made[method] = made
        return made
