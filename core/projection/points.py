"""Which chunks a map draws, and their vectors under each dense method.

A scope is one policy's chunks of one model, in one document or the whole index. The
methods share their chunk spans, so a chunk id names the same span in every panel; a
chunk stored under only some of the methods is left out (``dropped`` counts them).

The layout is fitted on at most ``MAX_POINTS`` points in all (chunks x methods). A
larger scope is drawn from a seeded sample of its chunks (``SAMPLE_SEED``, chosen among
the ids in sorted order, so one index version always gives the same sample whatever the
query); the chunks asked to be kept (a query's top k, a failure's gold) are added to it
when the sample missed them and are placed by the fitted projection (``kept``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core import methods as registry
from core.errors import ChunkscopeError, StoreError
from core.store import scan
from core.store.chroma_records import StoredHit
from core.store.lexical_index import fingerprint

if TYPE_CHECKING:
    from core.provenance.types import ChunkPolicy
    from core.store import ChunkStore

MAX_POINTS = 20_000
SAMPLE_SEED = 0
MIN_CHUNKS = 3  # fewer cannot be laid out in two dimensions


@dataclass(frozen=True, slots=True, kw_only=True)
class MapScope:
    """The chunks drawn (``chunks``, in chunk order: document id, then position) and
    ``vectors[m]``, their stored float32 vectors under method ``m``, row for row.

    ``scope_size`` counts the chunks of the scope; ``fit_rows`` are the rows the layout
    is fitted on (every row unless sampled); the other rows are ``kept`` chunks placed
    by the fitted projection. ``version`` changes whenever a collection drawn changes."""

    model: str
    policy_key: str
    doc_id: str | None
    methods: tuple[str, ...]
    chunks: tuple[StoredHit, ...]
    vectors: dict[str, np.ndarray]
    scope_size: int
    fit_rows: np.ndarray
    version: str
    dropped: int = 0
    row_of: dict[str, int] = field(default_factory=dict)

    @property
    def sampled(self) -> bool:
        return len(self.fit_rows) < self.scope_size

    @property
    def kept(self) -> tuple[str, ...]:
        fitted = set(self.fit_rows.tolist())
        return tuple(c.chunk_id for i, c in enumerate(self.chunks) if i not in fitted)

    def sample_line(self) -> str:
        """What is drawn, in words: every chunk, or the sample and what was added."""
        n = len(self.chunks)
        if not self.sampled:
            return f"all {n:,} chunks of the scope"
        added = len(self.chunks) - len(self.fit_rows)
        plus = f", plus {added} kept (the query's top k and the gold)" if added else ""
        return (
            f"a seeded sample of {len(self.fit_rows):,} of {self.scope_size:,} chunks "
            f"(at most {MAX_POINTS:,} points over {len(self.methods)} panel(s)){plus}"
        )


def dense_methods(methods: Sequence[str]) -> list[str]:
    """The dense methods among ``methods`` (a map draws stored vectors)."""
    return [m for m in methods if registry.get(m).family == "dense"]


def _ids(store: ChunkStore, name: str, doc_id: str | None) -> list[str]:
    where = {"doc_id": doc_id} if doc_id else None
    return store.read_collection(name, lambda col: scan.ids_where(col, where), [])


def _version(store: ChunkStore, names: Sequence[str], sizes: Sequence[int]) -> str:
    raw = "|".join(f"{n}:{s}:{fingerprint(store, n)}" for n, s in zip(names, sizes, strict=True))
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


def sample_rows(n: int, cap: int, seed: int = SAMPLE_SEED) -> np.ndarray:
    """``cap`` of ``range(n)`` (all when ``n <= cap``), seeded, in increasing order."""
    if n <= cap:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=cap, replace=False))


def read_scope(
    store: ChunkStore,
    *,
    model: str,
    methods: Sequence[str],
    policy: ChunkPolicy,
    doc_id: str | None = None,
    keep: Sequence[str] = (),
    max_points: int = MAX_POINTS,
) -> MapScope:
    """The chunks of the scope to draw and their vectors under each dense method.

    Raises ``ChunkscopeError`` when no dense method is asked, ``StoreError`` when a
    method has nothing stored in the scope, and ``ChunkscopeError`` when fewer than
    ``MIN_CHUNKS`` chunks are shared by every method."""
    names = dense_methods(methods)
    if not names:
        raise ChunkscopeError("a map draws dense methods' vectors: pick naive, late or another")
    cols = [store.collection_name(model, m, policy) for m in names]
    per_method = [_ids(store, c, doc_id) for c in cols]
    for method, ids in zip(names, per_method, strict=True):
        if not ids:
            where = f"in {doc_id!r}" if doc_id else "in the index"
            raise StoreError(f"nothing stored under {method} with policy {policy.key} {where}")
    shared = sorted(set.intersection(*(set(ids) for ids in per_method)))
    dropped = len(set.union(*(set(ids) for ids in per_method))) - len(shared)
    if len(shared) < MIN_CHUNKS:
        raise ChunkscopeError(
            f"only {len(shared)} chunk(s) shared by {', '.join(names)} here: a map needs "
            f"at least {MIN_CHUNKS}"
        )
    cap = max(MIN_CHUNKS, max_points // len(names))
    picked = [shared[i] for i in sample_rows(len(shared), cap)]
    chosen = set(picked)
    in_scope = set(shared)
    extra = [c for c in dict.fromkeys(keep) if c in in_scope and c not in chosen]
    wanted = picked + extra
    vectors: dict[str, np.ndarray] = {}
    chunks: tuple[StoredHit, ...] = ()
    order: list[str] = []
    for method in names:
        recs = store.scope_records(model=model, method=method, policy=policy, ids=wanted)
        row = {cid: i for i, cid in enumerate(recs.ids)}
        if not order:  # chunk order, from the first method's metadata
            order = list(recs.ids)
            chunks = tuple(recs.hit(i, score=0.0, rank=0) for i in range(len(recs.ids)))
        vectors[method] = recs.matrix[[row[c] for c in order]]
    fitted = np.asarray([i for i, c in enumerate(order) if c in chosen], dtype=np.int64)
    return MapScope(
        model=model, policy_key=policy.key, doc_id=doc_id, methods=tuple(names),
        chunks=chunks, vectors=vectors, scope_size=len(shared), fit_rows=fitted,
        version=_version(store, cols, [len(i) for i in per_method]), dropped=dropped,
        row_of={c: i for i, c in enumerate(order)},
    )  # fmt: skip
