"""Hybrids: fuse the rankings of two or more methods over the same chunks.

A fusion is named by its parts and parameters, and that name is the method:

- ``hybrid(late,bm25;rrf60)``: reciprocal rank fusion, ``score = sum over parts of
  1 / (K + rank)`` with K = 60 (a part that did not rank the chunk adds 0);
- ``hybrid(late,bm25;w0.7,0.3)``: weighted score fusion, each part's scores min-max
  normalised to [0, 1] over the chunks it ranked, then ``sum of weight * normalised``
  (a part that did not rank the chunk adds 0).

``hybrid(late,bm25)`` means ``rrf60``. Ties keep the chunk order of the scope.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

import numpy as np

from core.methods.spec import MethodSpec, ScoreScale, UnknownMethodError

DEFAULT_RRF_K = 60
_NAME = re.compile(r"^hybrid\((?P<parts>[^;()]+)(?:;(?P<params>[^()]*))?\)$")
_RRF = re.compile(r"^rrf(?P<k>\d{1,6})$")
_WEIGHTS = re.compile(r"^w(?P<w>[0-9.]+(?:,[0-9.]+)*)$")
_PALETTE = ("#2e86ab", "#d35400", "#16a085", "#c71585", "#b7950b", "#6a3d9a")
RRF_SCALE = ScoreScale(kind="rrf", label="RRF score (sum of 1/(K + rank))", short="RRF", low=0.0)
WSUM_SCALE = ScoreScale(
    kind="wsum", label="fused score (weighted, min-max scaled)", short="fused", low=0.0
)


def _error(message: str) -> Exception:
    return UnknownMethodError(message)


def _parse_params(name: str, params: str | None, n_parts: int) -> dict[str, float]:
    text = (params or f"rrf{DEFAULT_RRF_K}").replace(" ", "")
    if m := _RRF.match(text):
        if int(m["k"]) < 1:
            raise _error(f"{name}: the RRF constant must be at least 1")
        return {"rrf": float(int(m["k"]))}
    if m := _WEIGHTS.match(text):
        try:
            weights = [float(w) for w in m["w"].split(",")]
        except ValueError:
            raise _error(f"{name}: weights must be numbers, e.g. w0.7,0.3") from None
        if len(weights) != n_parts:
            raise _error(f"{name}: {len(weights)} weights for {n_parts} parts")
        if not all(np.isfinite(weights)) or sum(weights) <= 0:
            raise _error(f"{name}: weights must be finite, not negative, and not all 0")
        return {f"w{i}": w for i, w in enumerate(weights)}
    raise _error(f"{name}: parameters are rrfK (e.g. rrf60) or weights (e.g. w0.7,0.3)")


def canonical_name(parts: Sequence[str], params: Mapping[str, float]) -> str:
    if "rrf" in params:
        tail = f"rrf{int(params['rrf'])}"
    else:
        tail = "w" + ",".join(f"{params[f'w{i}']:g}" for i in range(len(parts)))
    return f"hybrid({','.join(parts)};{tail})"


def fusion_spec(name: str, *, known: Mapping[str, MethodSpec]) -> MethodSpec:
    """The spec of a fusion name (see the module docstring); parts must be registered,
    stored methods, each at most once."""
    match = _NAME.match(name.replace(" ", ""))
    if match is None:
        raise _error(f"{name!r} is not a fusion: write hybrid(A,B;rrf60) or hybrid(A,B;w0.5,0.5)")
    parts = tuple(p for p in match["parts"].split(",") if p)
    for part in parts:
        if part not in known:
            raise _error(f"{name}: {part!r} is not a registered method")
    if len(parts) < 2 or len(set(parts)) != len(parts):
        raise _error(f"{name}: a fusion needs two or more different methods")
    params = _parse_params(name, match["params"], len(parts))
    rrf = "rrf" in params
    canonical = canonical_name(parts, params)
    return MethodSpec(
        name=canonical,
        family="fused",
        score=RRF_SCALE if rrf else WSUM_SCALE,
        summary=("reciprocal rank fusion" if rrf else "weighted score fusion")
        + " of "
        + ", ".join(parts),
        colour=_PALETTE[hashlib.blake2b(canonical.encode(), digest_size=1).digest()[0] % 6],
        order=40 + max(known[p].order for p in parts),
        parts=parts,
        needs_mean_pooling=any(known[p].needs_mean_pooling for p in parts),
        params=params,
    )


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """1-based ranks of each row's scores, best first, ties in column order."""
    scores = np.atleast_2d(scores)
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    ranks[rows, order] = np.arange(1, scores.shape[1] + 1)[None, :]
    return ranks


def _minmax(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Scores scaled to [0, 1] per row over the allowed columns (others get 0)."""
    masked = np.where(allowed, scores, np.nan)
    empty = ~allowed.any(axis=-1, keepdims=True)
    low = np.where(empty, 0.0, np.nanmin(np.where(empty, 0.0, masked), axis=-1, keepdims=True))
    high = np.where(empty, 0.0, np.nanmax(np.where(empty, 0.0, masked), axis=-1, keepdims=True))
    span = high - low
    scaled = np.divide(scores - low, span, out=np.zeros_like(scores), where=span > 0)
    return np.where(allowed, scaled, 0.0)


def fuse_matrices(
    spec: MethodSpec, parts: Sequence[np.ndarray], allowed: np.ndarray | None = None
) -> np.ndarray:
    """Fused ``(n_queries, n_chunks)`` scores from every part's full score matrix; with
    ``allowed`` (same shape, bool), parts are ranked and scaled over allowed cells only."""
    shape = np.shape(parts[0])
    mask = np.ones(shape, dtype=bool) if allowed is None else np.broadcast_to(allowed, shape)
    total = np.zeros(shape, dtype=float)
    for i, part in enumerate(parts):
        scores = np.asarray(part, dtype=float)
        if "rrf" in spec.params:
            ranks = ranks_of(np.where(mask, scores, -np.inf))
            total += np.where(mask, 1.0 / (spec.params["rrf"] + ranks), 0.0)
        else:
            total += spec.params[f"w{i}"] * _minmax(scores, mask)
    return total


def fuse_ranked(
    spec: MethodSpec, parts: Sequence[Mapping[str, tuple[int, float]]]
) -> dict[str, float]:
    """Fused score per chunk id from each part's ``{chunk_id: (rank, score)}`` (a part may
    hold only its top ranks: a chunk it lacks adds 0)."""
    fused: dict[str, float] = {}
    if "rrf" in spec.params:
        k = spec.params["rrf"]
        for ranked in parts:
            for cid, (rank, _) in ranked.items():
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (k + rank)
        return fused
    for i, ranked in enumerate(parts):
        if not ranked:
            continue
        values = np.array([s for _, s in ranked.values()], dtype=float)
        low, span = float(values.min()), float(values.max() - values.min())
        weight = spec.params[f"w{i}"]
        for cid, (_, score) in ranked.items():
            scaled = (score - low) / span if span > 0 else 0.0
            fused[cid] = fused.get(cid, 0.0) + weight * scaled
    return fused
