"""One query, several methods, side by side: ranks, cosines and rank changes.

The query is encoded once, on its own (every method compares chunk vectors against the
same query vector). Within a scope of at most ``EXACT_LIMIT`` chunks (one document, or a
small index) every stored vector is read and ranked exactly in memory, so each chunk has
its full rank under every method ("moved from 143 to 2"). A larger scope is searched with
Chroma's HNSW index to a depth of ``ANN_DEPTH``; a chunk beyond that depth under a method
gets its exact cosine but no rank (``None``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import ChunkscopeError, StoreError
from core.store.records import StoredHit
from core.types import ChunkPolicy

if TYPE_CHECKING:
    from core.embed import Encoder
    from core.store import ChunkStore

EXACT_LIMIT = 5000
ANN_DEPTH = 1000
RankedChunk = StoredHit


@dataclass(frozen=True, slots=True, kw_only=True)
class RankChange:
    """One chunk's standing under each method.

    ``deltas[m] = ranks[m] - ranks[baseline]`` for every method but the baseline (the
    first method asked for); negative means the chunk moved up. ``delta`` is the delta of
    the second method (``late - naive`` for ``naive,late``); ``None`` when a rank is
    unknown or only one method was asked for.
    """

    chunk_id: str
    ranks: dict[str, int | None]
    cosines: dict[str, float | None]
    deltas: dict[str, int | None]
    delta: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """``results[m]`` is the top ``k`` under method ``m``; ``rank_changes`` covers every
    chunk in any method's top ``k``, best rank first. ``exact`` is True when every rank
    is a full exact rank within the scope; ``scope_sizes[m]`` counts the chunks searched."""

    query: str
    methods: tuple[str, ...]
    k: int
    doc_id: str | None
    model: str
    policy: ChunkPolicy
    results: dict[str, list[RankedChunk]]
    rank_changes: list[RankChange]
    scope_sizes: dict[str, int]
    exact: bool
    elapsed_s: float


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


@dataclass(slots=True)
class _MethodRanks:
    top: list[RankedChunk]
    ranks: dict[str, tuple[int, float]]
    size: int
    exact: bool


def _scope_size(store: ChunkStore, doc_id: str | None, **where: Any) -> int:
    return store.doc_count(doc_id, **where) if doc_id else store.count(**where)


def _exact_ranking(
    store: ChunkStore, qvec: np.ndarray, doc_id: str | None, **where: Any
) -> list[tuple[str, int, float]]:
    """Full exact ranking of the scope; equal cosines keep chunk order (doc_id, position).

    Only vectors are read for ranking; metadata is read just for the tied rows, if any.
    """
    ids, matrix = store.scope_vectors(doc_id=doc_id, **where)
    ranked = rank_in_memory(qvec, matrix, ids)
    tied = {
        cid
        for (a, _, ca), (b, _, cb) in zip(ranked, ranked[1:], strict=False)
        if ca == cb
        for cid in (a, b)
    }
    if not tied:
        return ranked
    recs = store.scope_records(ids=sorted(tied), **where)
    key = {
        cid: (m["doc_id"], m["chunk_index"], m["char_start"])
        for cid, m in zip(recs.ids, recs.metadatas, strict=True)
    }
    order = sorted(range(len(ids)), key=lambda i: key.get(ids[i], ("", -1, -1)))
    return rank_in_memory(qvec, matrix[order], [ids[i] for i in order])


def _hydrate(
    store: ChunkStore, ranked: Sequence[tuple[str, int, float]], **where: Any
) -> list[RankedChunk]:
    recs = store.scope_records(ids=[cid for cid, _, _ in ranked], **where)
    row_of = {cid: row for row, cid in enumerate(recs.ids)}
    return [recs.hit(row_of[cid], cosine=cos, rank=rank) for cid, rank, cos in ranked]


def _rank_method(
    store: ChunkStore, qvec: np.ndarray, k: int, size: int, doc_id: str | None, **where: Any
) -> _MethodRanks:
    if size <= EXACT_LIMIT:
        ranked = _exact_ranking(store, qvec, doc_id, **where)
        exact = True
    else:
        depth = min(size, max(k, ANN_DEPTH))
        found = store.nearest(qvec, n=depth, doc_id=doc_id, **where)
        ranked = [(cid, rank, cos) for rank, (cid, cos) in enumerate(found, start=1)]
        exact = len(ranked) == size
    ranks = {cid: (rank, cos) for cid, rank, cos in ranked}
    return _MethodRanks(_hydrate(store, ranked[:k], **where), ranks, size, exact)


def _missing_cosines(store: ChunkStore, qvec: np.ndarray, ids: list[str], **where: Any) -> dict:
    if not ids:
        return {}
    recs = store.scope_records(ids=ids, **where)
    return {cid: cos for cid, _, cos in rank_in_memory(qvec, recs.matrix, recs.ids)}


def _rank_changes(
    methods: Sequence[str], per: dict[str, _MethodRanks], extra: dict[str, dict[str, float]]
) -> list[RankChange]:
    seen = list(dict.fromkeys(h.chunk_id for m in methods for h in per[m].top))
    base = methods[0]
    changes = []
    for cid in seen:
        ranks = {m: per[m].ranks[cid][0] if cid in per[m].ranks else None for m in methods}
        cosines = {
            m: per[m].ranks[cid][1] if cid in per[m].ranks else extra[m].get(cid) for m in methods
        }
        deltas = {
            m: None if ranks[m] is None or ranks[base] is None else ranks[m] - ranks[base]
            for m in methods[1:]
        }
        delta = deltas[methods[1]] if len(methods) > 1 else None
        changes.append(
            RankChange(chunk_id=cid, ranks=ranks, cosines=cosines, deltas=deltas, delta=delta)
        )
    far = 1 << 62
    changes.sort(key=lambda c: min((r for r in c.ranks.values() if r is not None), default=far))
    return changes


def _check_scope(
    store: ChunkStore, size: int, doc_id: str | None, method: str, model: str, policy: ChunkPolicy
) -> None:
    if size:
        return
    if doc_id:
        raise StoreError(
            f"no chunks of {doc_id!r} indexed for {model}, method {method}, policy "
            f"{policy.key}: index it with `chunkscope index FILE --methods {method}` and "
            "the same policy, or check --doc"
        )
    raise StoreError(
        f"nothing indexed for {model}, method {method}, policy {policy.key}: run "
        f"`chunkscope index PATH --methods {method}` with the same policy first"
    )


def check_query(query: str) -> None:
    """Refuse a query with nothing to embed (its vector would rank noise)."""
    if not query.strip():
        raise ChunkscopeError("the query is empty: say what to look for")


def compare(
    query: str,
    *,
    methods: Sequence[str],
    encoder: Encoder,
    store: ChunkStore,
    policy: ChunkPolicy,
    k: int = 10,
    doc_id: str | None = None,
) -> Comparison:
    """Rank the chunks of one document (``doc_id``) or the whole index for ``query``."""
    check_query(query)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError("methods must be a non-empty list without repeats")
    if k < 1:
        raise ValueError("k must be at least 1")
    started = time.perf_counter()
    model = encoder.name
    sizes = {}
    for m in methods:
        sizes[m] = _scope_size(store, doc_id, model=model, method=m, policy=policy)
        _check_scope(store, sizes[m], doc_id, m, model, policy)
    qvec = np.asarray(encoder.encode_query(query), dtype=np.float32)
    per = {
        m: _rank_method(store, qvec, k, sizes[m], doc_id, model=model, method=m, policy=policy)
        for m in methods
    }
    top_ids = list(dict.fromkeys(h.chunk_id for m in methods for h in per[m].top))
    extra = {
        m: _missing_cosines(
            store,
            qvec,
            [c for c in top_ids if c not in per[m].ranks],
            model=model,
            method=m,
            policy=policy,
        )
        for m in methods
    }
    return Comparison(
        query=query,
        methods=tuple(methods),
        k=k,
        doc_id=doc_id,
        model=model,
        policy=policy,
        results={m: per[m].top for m in methods},
        rank_changes=_rank_changes(methods, per, extra),
        scope_sizes=sizes,
        exact=all(per[m].exact for m in methods),
        elapsed_s=time.perf_counter() - started,
    )


def hit_to_dict(hit: RankedChunk) -> dict[str, object]:
    """One ranked chunk in the CLI's JSON contract (plus provenance extras)."""
    return {
        "rank": hit.rank,
        "chunk_id": hit.chunk_id,
        "cosine": round(hit.cosine, 6),
        "doc_id": hit.doc_id,
        "doc_sha256": hit.doc_sha256,
        "char_start": hit.char_start,
        "char_end": hit.char_end,
        "pages": list(hit.pages),
        "heading_path": list(hit.heading_path),
        "citation": hit.citation.render(),
        "text": hit.text,
        "token_count": hit.token_count,
        "truncated_tokens": hit.truncated_tokens,
        "windows": list(hit.windows),
        "context": hit.context,
    }


def comparison_to_dict(cmp: Comparison) -> dict[str, object]:
    """``{"query", "results": {method: [...]}, "rank_changes": [...]}`` plus scope info."""
    return {
        "query": cmp.query,
        "model": cmp.model,
        "policy": cmp.policy.to_dict(),
        "doc_id": cmp.doc_id,
        "k": cmp.k,
        "methods": list(cmp.methods),
        "exact_ranks": cmp.exact,
        "scope_sizes": dict(cmp.scope_sizes),
        "results": {m: [hit_to_dict(h) for h in cmp.results[m]] for m in cmp.methods},
        "rank_changes": [
            {
                "chunk_id": c.chunk_id,
                "ranks": dict(c.ranks),
                "cosines": {m: None if v is None else round(v, 6) for m, v in c.cosines.items()},
                "deltas": dict(c.deltas),
                "delta": c.delta,
            }
            for c in cmp.rank_changes
        ],
    }
