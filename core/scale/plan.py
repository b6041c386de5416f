"""What a Ray run has to do, decided on the driver before any worker starts.

The same identity and skip rules as the plain indexer (``core.index.indexer``): each file is
hashed without being parsed; a (document version, method) complete in the store is
skipped; a file whose id is stored from a file of another name is refused on its line
(unless ``force``); two files sharing one id are refused up front. The store's markers
are listed once, so a candidate for skipping costs one completeness check and any
other pair costs nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ChunkscopeError
from core.formats import doc_id_for
from core.index.identity import StoredNames
from core.index.indexer import DocIndexResult
from core.index.sources import DocumentFile, refuse_shared_ids
from core.protocols import ChunkIndex, IndexListing
from core.provenance.types import ChunkPolicy

if TYPE_CHECKING:
    from core.store.markers import IndexedDoc


@dataclass(frozen=True, slots=True, kw_only=True)
class RunPlan:
    """``rows``: the documents to send to Ray (largest file first, so a long document does
    not start last and hold the run up); ``settled``: results known without Ray
    (every method already stored, or refused)."""

    rows: tuple[dict[str, Any], ...]
    settled: tuple[DocIndexResult, ...]


@dataclass(frozen=True, slots=True)
class _Listed:
    """A store's listing read once, answered again without asking the store."""

    listing: list[IndexedDoc]

    def indexed_documents(self) -> list[IndexedDoc]:
        return self.listing


def _complete_candidates(
    store: IndexListing, model: str, policy: ChunkPolicy
) -> set[tuple[str, str, str]]:
    """``(doc_id, sha256, method)`` with a complete marker for this model and policy."""
    return {
        (d.doc_id, d.sha256, d.method)
        for d in store.indexed_documents()
        if d.complete and d.model == model and d.policy_key == policy.key
    }


def plan_run(
    files: Sequence[Path],
    *,
    store: ChunkIndex,
    model: str,
    methods: Sequence[str],
    policy: ChunkPolicy,
    password: str | None = None,
    force: bool = False,
) -> RunPlan:
    """Rows for Ray and the results settled here (see the module docstring)."""
    items = [DocumentFile(path=p, password=password) for p in files]
    refuse_shared_ids(items)
    listing = store.indexed_documents()
    listed = _Listed(listing)
    candidates = set() if force else _complete_candidates(listed, model, policy)
    names = StoredNames(listed)  # the stored file name of each id, read once
    rows: list[dict[str, Any]] = []
    settled: list[DocIndexResult] = []
    for item in items:
        identity = item.identity()
        doc_id, sha = identity if identity else (doc_id_for(item.path.name), "")
        pending = [
            m
            for m in methods
            if (doc_id, sha, m) not in candidates
            or not store.is_version_indexed(doc_id, sha, model=model, method=m, policy=policy)
        ]
        known = functools.partial(
            DocIndexResult, doc_id=doc_id, source=str(item.path), sha256=sha, n_chunks=None
        )
        if not pending:
            settled.append(known(skipped=tuple(methods)))
            continue
        try:
            if not force:
                names.refuse_other_file(doc_id, sha or None, item.path.name)
        except ChunkscopeError as exc:
            settled.append(known(error=str(exc)))
            continue
        rows.append(
            {
                "path": str(item.path),
                "doc_id": doc_id,
                "source": str(item.path),
                "sha256": sha,
                "methods": pending,
                "skipped": [m for m in methods if m not in pending],
                "size": item.path.stat().st_size if identity else 0,
            }
        )
    rows.sort(key=lambda r: -int(r["size"]))
    return RunPlan(rows=tuple(rows), settled=tuple(settled))
