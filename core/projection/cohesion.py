"""The numbers behind a map, in the model's space (never in the 2-D layout).

- ``group_cohesion``: per method, the mean cosine of each chunk to its own group's
  centroid (its document, or its heading) against the mean cosine to the other groups'
  centroids. The own centroid leaves the chunk out (a chunk alone in its group has no
  own centroid and is not counted there), so a group of one does not score 1.0. Late
  chunking pools every chunk of a document from the same token states, so its own
  cosine rises above naive's: how much it tightens each document is the gap.
- ``query_cosines``: the cosine of the query to every drawn chunk, per method (what the
  ranking sorts).
- ``gold_chunks``: the drawn chunks that overlap a gold span of the same document
  version (half-open character spans).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.projection.points import MapScope


@dataclass(frozen=True, slots=True, kw_only=True)
class Cohesion:
    """``own``: mean cosine to the own group's centroid (None when no group holds two
    chunks); ``other``: mean over chunks of the mean cosine to every other group's
    centroid (None with one group); ``groups``/``chunks``: how many were counted."""

    method: str
    own: float | None
    other: float | None
    groups: int
    chunks: int

    @property
    def gap(self) -> float | None:
        return None if self.own is None or self.other is None else self.own - self.other


def _unit(rows: np.ndarray) -> np.ndarray:
    mat = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(mat, axis=-1, keepdims=True)
    return np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)


def group_cohesion(scope: MapScope, groups: Sequence[str]) -> dict[str, Cohesion]:
    """Per method, ``Cohesion`` of the drawn chunks under the grouping ``groups`` (one
    label per chunk, rows as ``scope.chunks``)."""
    if len(groups) != len(scope.chunks):
        raise ValueError(f"{len(groups)} group labels for {len(scope.chunks)} chunks")
    names, index = np.unique(np.asarray(groups, dtype=object), return_inverse=True)
    counts = np.bincount(index, minlength=len(names)).astype(np.float64)
    out = {}
    for method in scope.methods:
        unit = _unit(scope.vectors[method])
        sums = np.zeros((len(names), unit.shape[1]))
        np.add.at(sums, index, unit)
        own_rows = counts[index] > 1
        own = None
        if own_rows.any():
            rest = _unit(sums[index[own_rows]] - unit[own_rows])  # leave the chunk out
            own = float(np.mean(np.sum(rest * unit[own_rows], axis=1)))
        other = None
        if len(names) > 1:
            centroids = _unit(sums)
            total = unit @ centroids.sum(axis=0)
            mine = np.sum(unit * centroids[index], axis=1)
            other = float(np.mean((total - mine) / (len(names) - 1)))
        out[method] = Cohesion(
            method=method, own=own, other=other, groups=len(names), chunks=len(unit)
        )
    return out


def query_cosines(scope: MapScope, query_vec: np.ndarray) -> dict[str, np.ndarray]:
    """Per method, the cosine of the query to each drawn chunk (rows as ``scope.chunks``)."""
    q = _unit(np.asarray(query_vec).reshape(1, -1))[0]
    return {m: _unit(scope.vectors[m]) @ q for m in scope.methods}


def gold_chunks(
    scope: MapScope, doc_id: str, doc_sha256: str | None, spans: Sequence[tuple[int, int]]
) -> list[str]:
    """Ids of the drawn chunks of ``doc_id`` (that version, when ``doc_sha256`` is given)
    overlapping any of ``spans`` (half-open ``(char_start, char_end)``)."""
    return [
        c.chunk_id
        for c in scope.chunks
        if c.doc_id == doc_id
        and (doc_sha256 is None or c.doc_sha256 == doc_sha256)
        and any(c.char_start < b and a < c.char_end for a, b in spans)
    ]
