"""Any chunk's rank at full depth, under every method, in a scope of any size.

A dense method's ranks come from every stored vector of the scope, read once per
(store, collection, index version) and kept in memory as float64, the precision
``core.retrieve.ranking`` ranks in (8 bytes x width per chunk: about 300 MB for 100,000 chunks of
a 384-wide model); a query then costs one matrix-vector product. Ranks are 1-based;
equal scores keep the chunk order of the scope (document id, then position), as
everywhere else. A lexical method's ranks come from its
term index (``core.store.lexical``), which scores every chunk anyway; a fusion's from its
parts' full rankings (``core.methods.fusion``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core import methods as registry
from core.store import scan

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
                key = (str(meta["doc_id"]), int(meta["chunk_index"]), int(meta["char_start"]))
                rows.append((key, cid, vec))
        rows.sort(key=lambda r: r[0])
        stored = np.asarray([r[2] for r in rows], dtype=np.float32).reshape(len(rows), -1)
        matrix = stored.astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        ids = [r[1] for r in rows]
        doc_ids = np.asarray([r[0][0] for r in rows], dtype=object)
        return _Vectors(
            ids=ids, matrix=matrix, norms=norms, doc_ids=doc_ids,
            row_of={c: i for i, c in enumerate(ids)},
        )  # fmt: skip

    return store._read(name, read, None)


def loaded_vectors(
    store: ChunkStore, *, model: str, method: str, policy: ChunkPolicy
) -> _Vectors | None:
    """A dense collection's vectors, read once per index version (see the module docstring)."""
    from core.store.lexical import fingerprint

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


def _rank_in(scores: np.ndarray, row: int) -> int:
    """1-based rank of ``row``: better scores, then equal ones earlier in chunk order."""
    s = scores[row]
    return int((scores > s).sum() + (scores[:row] == s).sum()) + 1


def _scope_scores(
    store: ChunkStore,
    method: str,
    *,
    model: str,
    policy: ChunkPolicy,
    query: str,
    qvec: np.ndarray | None,
    doc_id: str | None,
) -> tuple[list[str], np.ndarray] | None:
    """``(ids, scores)`` of every chunk of the scope in chunk order, or None."""
    spec = registry.get(method)
    if spec.family == "lexical":
        from core.store.lexical import lexical_collection

        col = lexical_collection(store, model=model, method=method, policy=policy)
        if col is None:
            return None
        lo, hi = col.rows(doc_id)
        return list(col.ids[lo:hi]), col.index.scores(query)[lo:hi]
    if spec.family == "fused":
        from core.methods.fusion import fuse_ranked, ranks_of

        tables, in_order = [], []
        for part in spec.parts:
            got = _scope_scores(
                store, part, model=model, policy=policy, query=query, qvec=qvec, doc_id=doc_id
            )
            if got is None:
                continue
            ids, scores = got
            in_order.append(ids)
            ranks = ranks_of(scores)[0]
            tables.append(
                {c: (int(r), float(s)) for c, r, s in zip(ids, ranks, scores, strict=True)}
            )
        if not tables:
            return None
        fused = fuse_ranked(spec, tables)
        # every part lists the scope in chunk order: equal fused scores keep that order,
        # as core.retrieve.ranking and the evaluation break them
        order = [c for c in dict.fromkeys(c for ids in in_order for c in ids) if c in fused]
        return order, np.asarray([fused[c] for c in order])
    vectors = loaded_vectors(store, model=model, method=method, policy=policy)
    if vectors is None or qvec is None:
        return None
    if doc_id is None:
        return vectors.ids, vectors.cosines(slice(None), qvec)
    rows = np.flatnonzero(vectors.doc_ids == doc_id)
    return [vectors.ids[i] for i in rows], vectors.cosines(rows, qvec)


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
        got = _scope_scores(
            store, method, model=encoder.name, policy=policy, query=query, qvec=qvec, doc_id=doc_id
        )
        ids, scores = got if got is not None else ([], np.zeros(0))
        row = _find(ids, chunk_id)
        n = len(scores)
        kth = float(np.partition(scores, n - min(k, n))[n - min(k, n)]) if n else None
        out[method] = FullRank(
            method=method,
            chunk_id=chunk_id,
            rank=None if row is None else _rank_in(np.asarray(scores), row),
            score=None if row is None else float(scores[row]),
            scope_size=n,
            k=k,
            top_score=float(scores.max()) if n else None,
            kth_score=kth,
        )
    return out


def _find(ids: Sequence[str], chunk_id: str) -> int | None:
    try:
        return ids.index(chunk_id)
    except ValueError:
        return None


def timed_full_depth(*args: Any, **kwargs: Any) -> tuple[dict[str, FullRank], float]:
    """``full_depth_ranks`` and the seconds it took (the benchmark's and the page's note)."""
    started = time.perf_counter()
    found = full_depth_ranks(*args, **kwargs)
    return found, time.perf_counter() - started
