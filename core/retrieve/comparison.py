"""One query, several methods, side by side: ranks, scores and rank changes.

The query is encoded once, on its own, when a dense method is asked (every dense method
compares chunk vectors against the same query vector). How each method ranks a scope,
and when a rank is exact, is the store backend's (``core.retrieve.ranking.StoreRanker``):
dense ranks are exact within ``EXACT_LIMIT`` chunks and searched to ``ANN_DEPTH`` beyond,
lexical ranks are always exact, fused ranks are exact when their parts' are. A chunk
beyond the depth searched under a method gets its score but no rank (``None``). Each
method's scores are on its own scale (``core.methods.get(m).score``).

What is read is what is shown: each method is ranked ``depth`` deep (ids and scores
only), its top ``k`` are hydrated into checked records, and its score curve is the
ranked scores to ``depth``. A chunk's record beyond the top ``k`` is read only when asked
(``hits_at``), and rank changes are worked out only for the chunks shown
(``with_changes`` adds more), so a page ranking 5,000 deep decodes a few dozen records,
not 25,000. Ranks and scores do not depend on ``k``: with the same ``depth`` the top
``k`` equal the first ``k`` of a comparison asked with ``k = depth``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from core import defaults
from core import methods as registry
from core.errors import ChunkscopeError, StoreError
from core.provenance.types import ChunkPolicy
from core.retrieve.ranking import (
    ANN_DEPTH,
    EXACT_LIMIT,
    Ranking,
    Scope,
    StoreRanker,
    rank_in_memory,
)
from core.store.chroma_records import StoredHit

if TYPE_CHECKING:
    from core.protocols import QueryEncoder
    from core.store import ChunkStore

__all__ = [
    "ANN_DEPTH", "EXACT_LIMIT", "Comparison", "RankChange", "compare", "hit_of", "hits_at",
    "rank_in_memory", "with_changes",
]  # fmt: skip
RankedChunk = StoredHit


@dataclass(frozen=True, slots=True, kw_only=True)
class RankChange:
    """One chunk's standing under each method.

    ``deltas[m] = ranks[m] - ranks[baseline]`` for every method but the baseline (the
    first method asked for); negative means the chunk moved up. ``scores[m]`` is on
    method ``m``'s own scale. ``delta`` is the delta of
    the second method (``late - naive`` for ``naive,late``); ``None`` when a rank is
    unknown or only one method was asked for.
    """

    chunk_id: str
    ranks: dict[str, int | None]
    scores: dict[str, float | None]
    deltas: dict[str, int | None]
    delta: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """``results[m]`` is the top ``k`` under method ``m``; ``rank_changes`` covers every
    chunk in any method's top ``k``, best rank first. ``exact`` is True when every rank
    is a full exact rank within the scope; ``scope_sizes[m]`` counts the chunks searched.

    ``curves[m]`` holds method ``m``'s scores in rank order, ``depth`` deep (at least
    ``k``); ``rankings[m]`` is its ranking (ids and scores to ``depth``), kept to read
    more records or rank changes later without ranking again."""

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
    depth: int = 0
    curves: dict[str, tuple[float, ...]] = field(default_factory=dict)
    rankings: dict[str, Ranking] = field(default_factory=dict, compare=False, repr=False)


def _seen_order(
    methods: Sequence[str], per: dict[str, Ranking], ids: list[str], depth: int
) -> list[str]:
    """``ids`` in the order a walk of every method's top ``depth`` (``methods`` in order,
    each best first) first meets them; ids beyond every top ``depth`` keep their order,
    last."""
    far = (len(methods), 1 << 62)

    def first_met(cid: str) -> tuple[int, int]:
        for i, m in enumerate(methods):
            found = per[m].lookup(cid)
            if found is not None and found[0] <= depth:
                return i, found[0]
        return far

    return sorted(dict.fromkeys(ids), key=first_met)


def _rank_changes(
    methods: Sequence[str], per: dict[str, Ranking], chunk_ids: list[str], depth: int
) -> list[RankChange]:
    """The rank changes of ``chunk_ids``, best rank first; equal best ranks in the order a
    walk of the rankings meets them (as a comparison with ``k = depth`` lists them)."""
    seen = _seen_order(methods, per, chunk_ids, depth)
    missing = {m: per[m].scores_of([c for c in seen if per[m].lookup(c) is None]) for m in methods}
    base = methods[0]
    changes = []
    for cid in seen:
        found = {m: per[m].lookup(cid) for m in methods}
        ranks: dict[str, int | None] = {}
        scores: dict[str, float | None] = {}
        for m in methods:
            hit = found[m]
            ranks[m] = None if hit is None else hit[0]
            scores[m] = missing[m].get(cid) if hit is None else hit[1]
        deltas: dict[str, int | None] = {}
        for m in methods[1:]:
            rank, first = ranks[m], ranks[base]
            deltas[m] = None if rank is None or first is None else rank - first
        delta = deltas[methods[1]] if len(methods) > 1 else None
        changes.append(
            RankChange(chunk_id=cid, ranks=ranks, scores=scores, deltas=deltas, delta=delta)
        )
    far = 1 << 62
    changes.sort(key=lambda c: min((r for r in c.ranks.values() if r is not None), default=far))
    return changes


def _check_scope(
    size: int, doc_id: str | None, method: str, model: str, policy: ChunkPolicy
) -> None:
    if size:
        return
    parts = ",".join(registry.needs_indexing([method]))
    if doc_id:
        raise StoreError(
            f"no chunks of {doc_id!r} indexed for {model}, method {method}, policy "
            f"{policy.key}: index it with `chunkscope index FILE --methods {parts}` and "
            "the same policy, or check --doc"
        )
    raise StoreError(
        f"nothing indexed for {model}, method {method}, policy {policy.key}: run "
        f"`chunkscope index PATH --methods {parts}` with the same policy first"
    )


def check_query(query: str) -> None:
    """Refuse a query with nothing to embed (its vector would rank noise)."""
    if not query.strip():
        raise ChunkscopeError("the query is empty: say what to look for")


def compare(
    query: str,
    *,
    methods: Sequence[str],
    encoder: QueryEncoder,
    store: ChunkStore,
    policy: ChunkPolicy,
    k: int = defaults.K,
    doc_id: str | None = None,
    depth: int | None = None,
) -> Comparison:
    """Rank the chunks of one document (``doc_id``) or the whole index for ``query``:
    each method ``depth`` deep (default ``k``), its top ``k`` read as records."""
    check_query(query)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError("methods must be a non-empty list without repeats")
    if k < 1:
        raise ValueError("k must be at least 1")
    depth = max(k, depth or k)
    names = registry.parse_methods(methods)
    started = time.perf_counter()
    model = encoder.name
    scope = Scope(store=store, model=model, policy=policy, doc_id=doc_id)
    sizes = {}
    for m in names:
        sizes[m] = scope.size(m)
        _check_scope(sizes[m], doc_id, m, model, policy)
    dense = any(registry.get(p).family == "dense" for p in registry.needs_indexing(names))
    qvec = np.asarray(encoder.encode_query(query), dtype=np.float32) if dense else None
    ranker = StoreRanker(scope, query=query, qvec=qvec)  # a fusion's parts reuse the methods'
    per = {m: ranker.rank(m, depth) for m in names}
    tops = {m: per[m].top(k) for m in names}
    shown = [h.chunk_id for m in names for h in tops[m]]
    return Comparison(
        query=query,
        methods=names,
        k=k,
        doc_id=doc_id,
        model=model,
        policy=policy,
        results=tops,
        rank_changes=_rank_changes(names, per, shown, depth),
        scope_sizes=sizes,
        exact=all(per[m].exact for m in names),
        elapsed_s=time.perf_counter() - started,
        depth=depth,
        curves={m: tuple(score for _, _, score in per[m].ranked[:depth]) for m in names},
        rankings=per,
    )


def hits_at(cmp: Comparison, method: str, ranks: Sequence[int]) -> list[StoredHit]:
    """The records of ``method``'s chunks at the 1-based ``ranks`` (within the depth
    ranked; others are skipped), in the order asked, read only now."""
    ranked = cmp.rankings[method].ranked
    part = [ranked[r - 1] for r in ranks if 1 <= r <= len(ranked)]
    return cmp.rankings[method].hydrate(part) if part else []


def hit_of(cmp: Comparison, method: str, chunk_id: str) -> StoredHit | None:
    """``chunk_id``'s record under ``method`` (its rank and score there; rank 0 when it
    lies beyond the depth ranked), read now; None when the method does not hold it."""
    ranking = cmp.rankings.get(method)
    if ranking is None:
        return next((h for h in cmp.results.get(method, ()) if h.chunk_id == chunk_id), None)
    found = ranking.lookup(chunk_id)
    if found is None:
        score = ranking.scores_of([chunk_id]).get(chunk_id)
        found = None if score is None else (0, score)
    if found is None:
        return None
    hits = ranking.hydrate([(chunk_id, found[0], found[1])])
    return hits[0] if hits else None


def with_changes(cmp: Comparison, chunk_ids: Sequence[str]) -> Comparison:
    """``cmp`` with the rank changes of ``chunk_ids`` too (chunks shown beyond the top
    ``k``, such as a rerank's), in the order a comparison lists them."""
    held = {c.chunk_id for c in cmp.rank_changes}
    more = [c for c in chunk_ids if c not in held]
    if not more:
        return cmp
    ids = [*(c.chunk_id for c in cmp.rank_changes), *more]
    changes = _rank_changes(cmp.methods, cmp.rankings, ids, cmp.depth or cmp.k)
    return replace(cmp, rank_changes=changes)


def hit_to_dict(hit: RankedChunk) -> dict[str, object]:
    """One ranked chunk in the CLI's JSON contract (plus provenance extras): ``score`` on
    the scale ``score_kind`` names; ``matched`` (lexical) the document spans of matched
    words; ``part_ranks`` (fused) each part's rank."""
    return {
        "rank": hit.rank,
        "chunk_id": hit.chunk_id,
        "score": round(hit.score, 6),
        "score_kind": registry.get(hit.method).score.kind,
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
        "matched": [list(span) for span in hit.matched],
        "part_ranks": dict(hit.part_ranks),
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
        "score_kinds": {m: registry.get(m).score.kind for m in cmp.methods},
        "exact_ranks": cmp.exact,
        "scope_sizes": dict(cmp.scope_sizes),
        "results": {m: [hit_to_dict(h) for h in cmp.results[m]] for m in cmp.methods},
        "rank_changes": [
            {
                "chunk_id": c.chunk_id,
                "ranks": dict(c.ranks),
                "scores": {m: None if v is None else round(v, 6) for m, v in c.scores.items()},
                "deltas": dict(c.deltas),
                "delta": c.delta,
            }
            for c in cmp.rank_changes
        ],
    }
