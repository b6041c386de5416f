"""Rank one scope of the store for one query under one method, by the method's family.

- dense: within a scope of at most ``EXACT_LIMIT`` chunks every stored vector is read and
  ranked exactly in memory (each chunk has its full rank); a larger scope is searched with
  Chroma's HNSW index to a depth of ``ANN_DEPTH`` (a chunk beyond it has its exact cosine
  but no rank);
- lexical: the collection's BM25 index scores every chunk of the scope, so every rank is
  exact and full at any scope size;
- fused: each part is ranked as above, then fused (``core.methods.fusion``); a chunk
  that no part ranked has no fused rank. Equal fused scores (two chunks with swapped
  ranks under reciprocal rank fusion) keep chunk order, as the evaluation's in-memory
  ranking does (``core.evaluate.scoring.rank_rows``), so Compare and Evaluate agree.

A ``Ranking`` keeps the ranked ids to the depth searched and answers ``lookup(chunk_id)``
with ``(rank, score)``; its top ``k`` are hydrated into checked ``StoredHit``s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from core import methods as registry
from core.store.records import StoredHit

if TYPE_CHECKING:
    from core.methods import MethodSpec
    from core.provenance.types import ChunkPolicy
    from core.store import ChunkStore

EXACT_LIMIT = 5000
ANN_DEPTH = 1000
Ranked = list[tuple[str, int, float]]  # (chunk_id, rank, score), best first


@dataclass(slots=True)
class Ranking:
    """One method's ranking of a scope (see the module docstring)."""

    method: str
    ranked: Ranked
    size: int
    exact: bool
    hydrate: Callable[[Ranked], list[StoredHit]]
    scores_of: Callable[[list[str]], dict[str, float]]
    finder: Callable[[str], tuple[int, float] | None] | None = None
    # chunk-order keys (doc_id, chunk_index, char_start) of some ids: what breaks a tie
    order_of: Callable[[list[str]], dict[str, tuple[str, int, int]]] | None = None

    def lookup(self, chunk_id: str) -> tuple[int, float] | None:
        """``(rank, score)`` of a chunk, or None when it lies beyond the depth searched."""
        if self.finder is None:
            table = {cid: (rank, score) for cid, rank, score in self.ranked}
            self.finder = table.get
        return self.finder(chunk_id)

    def top(self, k: int) -> list[StoredHit]:
        return self.hydrate(self.ranked[:k])


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


def rank_in_memory(
    query_vec: np.ndarray, matrix: np.ndarray, ids: Sequence[str]
) -> list[tuple[str, int, float]]:
    """Exact cosine ranking: ``(id, rank, cosine)`` best first, ranks 1-based.

    Rows and query are normalised here (a zero row has cosine 0). Ties keep the order of
    ``ids`` (a stable sort), so pass ids in chunk order.
    """
    if len(ids) != len(matrix):
        raise ValueError(f"{len(ids)} ids for {len(matrix)} rows")
    if not len(ids):
        return []
    mat = np.asarray(matrix, dtype=np.float64)
    query = np.asarray(query_vec, dtype=np.float64).reshape(-1)
    norms = np.linalg.norm(mat, axis=1) * (np.linalg.norm(query) or 1.0)
    cosines = np.divide(mat @ query, norms, out=np.zeros(len(ids)), where=norms > 0)
    order = np.argsort(-cosines, kind="stable")
    return [(ids[i], rank, float(cosines[i])) for rank, i in enumerate(order, start=1)]


# -- dense -----------------------------------------------------------------------------


def _exact_dense(scope: Scope, method: str, qvec: np.ndarray) -> Ranked:
    """Full exact ranking; equal cosines keep chunk order (doc_id, position).

    Only vectors are read for ranking; metadata is read just for the tied rows, if any.
    """
    where = scope.where(method)
    ids, matrix = scope.store.scope_vectors(doc_id=scope.doc_id, **where)
    ranked = rank_in_memory(qvec, matrix, ids)
    tied = {
        cid
        for (a, _, ca), (b, _, cb) in zip(ranked, ranked[1:], strict=False)
        if ca == cb
        for cid in (a, b)
    }
    if not tied:
        return ranked
    recs = scope.store.scope_records(ids=sorted(tied), **where)
    key = {
        cid: (m["doc_id"], m["chunk_index"], m["char_start"])
        for cid, m in zip(recs.ids, recs.metadatas, strict=True)
    }
    order = sorted(range(len(ids)), key=lambda i: key.get(ids[i], ("", -1, -1)))
    return rank_in_memory(qvec, matrix[order], [ids[i] for i in order])


def _order_key(meta: Any) -> tuple[str, int, int]:
    return (str(meta["doc_id"]), int(meta["chunk_index"]), int(meta["char_start"]))


def _dense(scope: Scope, method: str, qvec: np.ndarray, depth: int, size: int) -> Ranking:
    where = scope.where(method)
    store = scope.store
    if size <= EXACT_LIMIT:
        ranked, exact = _exact_dense(scope, method, qvec), True
    else:
        found = store.nearest(
            qvec, n=min(size, max(depth, ANN_DEPTH)), doc_id=scope.doc_id, **where
        )
        ranked = [(cid, rank, cos) for rank, (cid, cos) in enumerate(found, start=1)]
        exact = len(ranked) == size

    def hydrate(part: Ranked) -> list[StoredHit]:
        recs = store.scope_records(ids=[cid for cid, _, _ in part], **where)
        row_of = {cid: row for row, cid in enumerate(recs.ids)}
        return [recs.hit(row_of[c], score=s, rank=r) for c, r, s in part if c in row_of]

    def scores_of(ids: list[str]) -> dict[str, float]:
        if not ids:
            return {}
        recs = store.scope_records(ids=ids, **where)
        return {cid: cos for cid, _, cos in rank_in_memory(qvec, recs.matrix, recs.ids)}

    def order_of(ids: list[str]) -> dict[str, tuple[str, int, int]]:
        recs = store.scope_records(ids=ids, **where) if ids else None
        if recs is None:
            return {}
        return {c: _order_key(m) for c, m in zip(recs.ids, recs.metadatas, strict=True)}

    return Ranking(method, ranked, size, exact, hydrate, scores_of, order_of=order_of)


# -- lexical ---------------------------------------------------------------------------


def top_positions(scores: np.ndarray, depth: int) -> np.ndarray:
    """Positions of the ``depth`` best scores, best first, equal scores in position order
    (what a stable sort of the whole vector gives, without sorting all of it)."""
    n = len(scores)
    if depth >= n:
        return np.argsort(-scores, kind="stable")
    threshold = np.partition(scores, n - depth)[n - depth]  # the depth-th largest
    above = np.flatnonzero(scores > threshold)
    level = np.flatnonzero(scores == threshold)[: depth - len(above)]
    picked = np.concatenate([above, level])
    return picked[np.lexsort((picked, -scores[picked]))]


def _lexical(scope: Scope, method: str, query: str, depth: int) -> Ranking:
    from core.store.lexical import lexical_collection

    col = lexical_collection(scope.store, model=scope.model, method=method, policy=scope.policy)
    if col is None:
        return Ranking(method, [], 0, True, lambda part: [], lambda ids: {})
    lo, hi = col.rows(scope.doc_id)
    scores = col.index.scores(query)[lo:hi] if hi > lo else np.zeros(0, np.float32)
    ranked = [
        (col.ids[lo + int(i)], rank, float(scores[i]))
        for rank, i in enumerate(top_positions(scores, max(depth, 1)), start=1)
    ]

    def position(chunk_id: str) -> int | None:
        row = col.row_of.get(chunk_id)
        return None if row is None or not lo <= row < hi else row - lo

    def find(chunk_id: str) -> tuple[int, float] | None:  # every chunk has its full rank
        i = position(chunk_id)
        if i is None:
            return None
        s = scores[i]
        return int((scores > s).sum() + (scores[:i] == s).sum()) + 1, float(s)

    def hydrate(part: Ranked) -> list[StoredHit]:
        return [col.hit(col.row_of[c], score=s, rank=r, query=query) for c, r, s in part]

    def scores_of(ids: list[str]) -> dict[str, float]:
        found = {c: position(c) for c in ids}
        return {c: float(scores[i]) for c, i in found.items() if i is not None}

    def order_of(ids: list[str]) -> dict[str, tuple[str, int, int]]:
        rows = {c: col.row_of.get(c) for c in ids}
        return {c: _order_key(col.metadatas[r]) for c, r in rows.items() if r is not None}

    return Ranking(method, ranked, hi - lo, True, hydrate, scores_of, find, order_of)


# -- fused -----------------------------------------------------------------------------


def _fused(spec: MethodSpec, parts: Sequence[Ranking], k: int) -> Ranking:
    from core.methods.fusion import fuse_ranked

    tables = [{cid: (rank, score) for cid, rank, score in p.ranked} for p in parts]
    fused = fuse_ranked(spec, tables)
    position = _tie_order(fused, parts)
    order = sorted(fused, key=lambda c: (-fused[c], position.get(c, ("\uffff", 0, 0)), c))
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

    def order_of(ids: list[str]) -> dict[str, tuple[str, int, int]]:
        return _tie_order(dict.fromkeys(ids, 0.0), parts)

    exact = all(p.exact and len(p.ranked) == p.size for p in parts)
    size = max(p.size for p in parts)
    return Ranking(spec.name, ranked, size, exact, hydrate, scores_of, order_of=order_of)


def _tie_order(
    fused: dict[str, float], parts: Sequence[Ranking]
) -> dict[str, tuple[str, int, int]]:
    """Chunk-order keys of the ids whose fused score another id shares (read from the
    parts' records only for those; an untied id needs none)."""
    count: dict[float, int] = {}
    for score in fused.values():
        count[score] = count.get(score, 0) + 1
    wanted = [c for c, s in fused.items() if count[s] > 1]
    found: dict[str, tuple[str, int, int]] = {}
    # a lexical part holds its scope's metadata in memory; a dense one reads the store
    for part in sorted(parts, key=lambda p: registry.get(p.method).family != "lexical"):
        missing = [c for c in wanted if c not in found]
        if not missing or part.order_of is None:
            continue
        found.update(part.order_of(missing))
    return found


def rank_scope(
    scope: Scope,
    method: str,
    *,
    query: str,
    qvec: np.ndarray | None,
    depth: int,
    ranked: dict[tuple[str, int], Ranking] | None = None,
) -> Ranking:
    """``method``'s ranking of ``scope`` for ``query`` (``qvec``: its vector, for dense
    methods), at least ``depth`` deep where the method is not exact at full depth.

    ``ranked`` holds the rankings already made for this query and scope, by (method,
    depth): a fusion's part ranked as deep as a method asked on its own is that ranking,
    not a second search."""
    memo = {} if ranked is None else ranked
    key = (method, depth)
    if key in memo:
        return memo[key]
    spec = registry.get(method)
    if spec.family == "fused":  # parts in full where exact ranking is cheap, else deep
        parts = []
        for part in spec.parts:
            size = scope.size(part)
            deep = size if size <= EXACT_LIMIT else max(depth, ANN_DEPTH)
            parts.append(rank_scope(scope, part, query=query, qvec=qvec, depth=deep, ranked=memo))
        found = _fused(spec, parts, depth)
    elif spec.family == "lexical":
        found = _lexical(scope, method, query, depth)
    elif qvec is None:
        raise ValueError(f"{method} is dense: it needs the query vector")
    else:
        found = _dense(scope, method, qvec, depth, scope.size(method))
    memo[key] = found
    return found
