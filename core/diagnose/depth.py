"""Any chunk's rank at full depth, under every method, in a scope of any size.

A dense method's ranks come from every stored vector of the scope, read once per
(store, collection, index version) and kept in memory as float64, the precision
``core.retrieve.ranking`` ranks in (8 bytes x width per chunk: about 300 MB for 100,000 chunks of
a 384-wide model); a query then costs one matrix-vector product. Ranks are 1-based;
equal scores keep the chunk order of the scope (document id, then position), as
everywhere else. A lexical method's ranks come from its
term index (``core.store.lexical_index``), which scores every chunk anyway; a fusion's from its
parts' full rankings. Every ranking is made by ``core.retrieve.ranking`` (``rank_scores``,
``fuse_rankings``), the rules Compare and Evaluate rank by.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core import methods as registry
from core.retrieve.ranking import (
    OrderKey,
    Ranking,
    Scope,
    StoreRanker,
    fuse_rankings,
    order_key,
    rank_scores,
)
from core.store import scan
from core.store.lexical_index import fingerprint

if TYPE_CHECKING:
    from core.protocols import QueryEncoder
    from core.provenance.types import ChunkPolicy
    from core.store import ChunkStore

_LOADED: OrderedDict[tuple[str, str, str], _Vectors] = OrderedDict()
_KEEP_LOADED = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class FullRank:
    """Where one chunk stands under one method for one query.

    ``rank`` is None when the chunk is not in the scope under that method (not indexed
    there). ``top_score`` is rank 1's score, ``kth_score`` rank ``k``'s; ``to_enter`` is
    how much the chunk's score must rise to pass rank ``k`` (0 when it is inside).
    """

    method: str
    chunk_id: str
    rank: int | None
    score: float | None
    scope_size: int
    k: int
    top_score: float | None
    kth_score: float | None
    beyond: int | None = None  # an external retriever's log depth, when the chunk is past it

    @property
    def label(self) -> str:
        """``12 of 4,000``; ``beyond its log's depth of 10``; ``-`` when not ranked."""
        if self.rank is not None:
            return f"{self.rank:,} of {self.scope_size:,}"
        if self.beyond is not None:
            return f"beyond its log's depth of {self.beyond:,}"
        return "-"

    @property
    def to_enter(self) -> float | None:
        if self.score is None or self.kth_score is None or self.rank is None:
            return None
        return 0.0 if self.rank <= self.k else float(self.kth_score - self.score)


@dataclass(slots=True)
class _Vectors:
    """One collection's vectors in chunk order, with each row's document."""

    ids: list[str]
    matrix: np.ndarray  # float64 of the stored float32 values
    norms: np.ndarray  # float64 row norms
    doc_ids: np.ndarray
    row_of: dict[str, int]
    keys: list[OrderKey]  # each row's chunk-order key

    def cosines(self, rows: slice | np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosines of ``rows`` with ``query``, computed as ``core.retrieve.ranking.rank_in_memory``
        does, so equal inputs rank alike."""
        q = np.asarray(query, dtype=np.float64).reshape(-1)
        norms = self.norms[rows] * (np.linalg.norm(q) or 1.0)
        dots = self.matrix[rows] @ q
        return np.divide(dots, norms, out=np.zeros(len(dots)), where=norms > 0)


def _read_vectors(store: ChunkStore, name: str) -> _Vectors | None:
    def read(col: Any) -> _Vectors:
        rows: list[tuple[tuple[str, int, int], str, Any]] = []
        for page in scan.iter_pages(col, include=["embeddings", "metadatas"]):
            for cid, vec, meta in zip(
                page["ids"], page["embeddings"], page["metadatas"], strict=True
            ):
                key = order_key(meta)
                rows.append((key, cid, vec))
        rows.sort(key=lambda r: r[0])
        stored = np.asarray([r[2] for r in rows], dtype=np.float32).reshape(len(rows), -1)
        matrix = stored.astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        ids = [r[1] for r in rows]
        doc_ids = np.asarray([r[0][0] for r in rows], dtype=object)
        return _Vectors(
            ids=ids, matrix=matrix, norms=norms, doc_ids=doc_ids,
            row_of={c: i for i, c in enumerate(ids)}, keys=[r[0] for r in rows],
        )  # fmt: skip

    return store.read_collection(name, read, None)


def loaded_vectors(
    store: ChunkStore, *, model: str, method: str, policy: ChunkPolicy
) -> _Vectors | None:
    """A dense collection's vectors, read once per index version (see the module docstring)."""
    name = store.collection_name(model, method, policy)
    key = (store.location.describe(), name, fingerprint(store, name))
    if key not in _LOADED:
        found = _read_vectors(store, name)
        if found is None:
            return None
        _LOADED[key] = found
        while len(_LOADED) > _KEEP_LOADED:
            _LOADED.popitem(last=False)
    _LOADED.move_to_end(key)
    return _LOADED[key]


def _scope_ranking(
    store: ChunkStore,
    method: str,
    *,
    model: str,
    policy: ChunkPolicy,
    query: str,
    qvec: np.ndarray | None,
    doc_id: str | None,
    depth: int,
) -> Ranking | None:
    """``method``'s exact ranking of every chunk of the scope, ``depth`` deep, or None
    when nothing of the scope is indexed under it."""
    spec = registry.get(method)
    if spec.family == "lexical":  # the term index scores every chunk: the store's ranking
        scope = Scope(store=store, model=model, policy=policy, doc_id=doc_id)
        return StoreRanker(scope, query=query, qvec=qvec).rank(method, depth)
    if spec.family == "fused":
        parts = []
        for part in spec.parts:
            got = _scope_ranking(
                store, part, model=model, policy=policy, query=query, qvec=qvec,
                doc_id=doc_id, depth=1 << 62,
            )  # fmt: skip
            if got is not None:
                parts.append(got)
        return fuse_rankings(spec, parts, depth) if parts else None
    vectors = loaded_vectors(store, model=model, method=method, policy=policy)
    if vectors is None or qvec is None:
        return None
    lo, hi = 0, len(vectors.ids)
    if doc_id is not None:  # rows are in chunk order: a document's are together
        inside = np.flatnonzero(vectors.doc_ids == doc_id)
        lo, hi = (int(inside[0]), int(inside[-1]) + 1) if len(inside) else (0, 0)

    def dense_position(chunk_id: str) -> int | None:
        row = vectors.row_of.get(chunk_id)
        return None if row is None or not lo <= row < hi else row - lo

    def dense_order(wanted: list[str]) -> dict[str, OrderKey]:
        rows = {c: vectors.row_of.get(c) for c in wanted}
        return {c: vectors.keys[r] for c, r in rows.items() if r is not None}

    ids = vectors.ids if (lo, hi) == (0, len(vectors.ids)) else vectors.ids[lo:hi]
    return rank_scores(
        method, ids, vectors.cosines(slice(lo, hi), qvec), depth, position=dense_position,
        order_of=dense_order,
    )  # fmt: skip


def full_depth_ranks(
    query: str,
    chunk_id: str,
    *,
    methods: Sequence[str],
    encoder: QueryEncoder,
    store: ChunkStore,
    policy: ChunkPolicy,
    doc_id: str | None = None,
    k: int = 10,
) -> dict[str, FullRank]:
    """``chunk_id``'s exact rank under each of ``methods`` for ``query`` in the scope
    (one document, or the whole index), with rank 1's and rank ``k``'s scores."""
    names = registry.parse_methods(methods)
    dense = any(registry.get(p).family == "dense" for p in registry.needs_indexing(names))
    qvec = np.asarray(encoder.encode_query(query), dtype=np.float32) if dense else None
    out = {}
    for method in names:
        ranking = _scope_ranking(
            store, method, model=encoder.name, policy=policy, query=query, qvec=qvec,
            doc_id=doc_id, depth=k,
        )  # fmt: skip
        found = ranking.lookup(chunk_id) if ranking is not None else None
        top = ranking.ranked[:k] if ranking is not None else []
        out[method] = FullRank(
            method=method,
            chunk_id=chunk_id,
            rank=None if found is None else found[0],
            score=None if found is None else found[1],
            scope_size=ranking.size if ranking is not None else 0,
            k=k,
            top_score=top[0][2] if top else None,
            kth_score=top[-1][2] if top else None,
        )
    return out


def timed_full_depth(*args: Any, **kwargs: Any) -> tuple[dict[str, FullRank], float]:
    """``full_depth_ranks`` and the seconds it took (the benchmark's and the page's note)."""
    started = time.perf_counter()
    found = full_depth_ranks(*args, **kwargs)
    return found, time.perf_counter() - started
