"""One 2-D projection of a scope's chunks under every method at once.

The fit sees every method's vectors of the fitted rows stacked (unit length first: the
methods score by cosine, and on unit vectors Euclidean distance orders pairs as cosine
does), so one position means the same in every panel: a chunk that moved between
panels moved in the model's space, not because each panel was fitted on its own.

- ``pca``: the two principal components of the stacked vectors (scikit-learn, exact
  SVD under 500 columns); instant, linear, so it keeps global distances but crowds
  neighbourhoods;
- ``umap``: umap-learn with a fixed seed (``SEED``) on the first ``UMAP_DIMS``
  principal components, ``UMAP_EPOCHS`` epochs; keeps neighbourhoods, not distances
  between far groups. Numba compiles its kernels on a process's first fit.

Rows outside the fit (kept chunks of a sampled scope) and the query are placed by the
fitted projection (``_Fitted.transform``: exact under PCA; under UMAP among their nearest
fitted points). A fitted projection is kept in memory per (index
version, methods, scope, kind, fitted rows); a layout asked again is read from there.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.bounded_cache import BoundedCache
from core.errors import ChunkscopeError
from core.projection.points import MapScope

KINDS = ("pca", "umap")
SEED = 0
UMAP_DIMS = 50
UMAP_EPOCHS = 200
UMAP_NEIGHBOURS = 15
UMAP_MIN_POINTS = 10
_KEEP_FITTED = 6
_FITTED: BoundedCache[tuple[Any, ...], _Fitted] = BoundedCache(_KEEP_FITTED)


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """``xy[m]``: the (n, 2) position of each chunk of the scope under method ``m`` (rows
    as ``MapScope.chunks``); ``query_xy`` the query's, when a query vector was given;
    ``note`` what the axes are; ``fit_s`` how long the fit took (0 when it was kept)."""

    kind: str
    xy: dict[str, np.ndarray]
    query_xy: tuple[float, float] | None
    note: str
    fit_s: float
    reused: bool


@dataclass(slots=True)
class _Fitted:
    kind: str
    pca: Any
    reduced: np.ndarray | None  # UMAP: the fitted points in the PCA space it ran on
    fitted_xy: np.ndarray  # (rows x methods, 2): the fit's own positions, method-major
    note: str
    fit_s: float

    def transform(self, unit: np.ndarray) -> np.ndarray:
        """PCA: the exact linear projection. UMAP: the mean position of the
        ``UMAP_NEIGHBOURS`` nearest fitted points (in the space UMAP ran on), weighted by
        inverse distance: where UMAP's own ``transform`` starts, without compiling its
        kernels a second time."""
        reduced = self.pca.transform(unit)
        if self.reduced is None:
            return reduced[:, :2]
        out = np.zeros((len(reduced), 2))
        near = min(UMAP_NEIGHBOURS, len(self.reduced))
        for i, row in enumerate(reduced):
            dist = np.linalg.norm(self.reduced - row, axis=1)
            nearest = np.argpartition(dist, near - 1)[:near]
            weights = 1.0 / (dist[nearest] + 1e-9)
            out[i] = weights @ self.fitted_xy[nearest] / weights.sum()
        return out


def _unit(rows: np.ndarray) -> np.ndarray:
    """Rows at unit length, float32 as stored (a picture needs no more precision)."""
    mat = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=-1, keepdims=True)
    return np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)


def _solver(stacked: np.ndarray) -> str:
    """Many more points than dimensions: the covariance's eigenvectors (a d x d problem)
    give the components in a fraction of an SVD of the whole matrix; scikit-learn's own
    choice picks them only past ten points per dimension."""
    n, dim = stacked.shape
    return "covariance_eigh" if n >= 2 * dim else "auto"


def _fit(kind: str, stacked: np.ndarray) -> _Fitted:
    from sklearn.decomposition import PCA  # type: ignore[import-untyped]

    started = time.perf_counter()
    n, dim = stacked.shape
    if kind == "pca":
        pca = PCA(n_components=2, svd_solver=_solver(stacked), random_state=SEED).fit(stacked)
        xy = pca.transform(stacked)
        a, b = (100 * pca.explained_variance_ratio_).tolist()
        note = f"PCA: the two axes hold {a:.0f}% and {b:.0f}% of the vectors' variance"
        return _Fitted("pca", pca, None, xy, note, time.perf_counter() - started)
    if n < UMAP_MIN_POINTS:
        raise ChunkscopeError(f"UMAP needs at least {UMAP_MIN_POINTS} points; PCA draws {n}")
    import umap  # type: ignore[import-untyped]

    pca = PCA(n_components=min(UMAP_DIMS, dim, n), svd_solver=_solver(stacked), random_state=SEED)
    pca = pca.fit(stacked)
    reduced = pca.transform(stacked)
    reducer = umap.UMAP(
        n_neighbors=min(UMAP_NEIGHBOURS, n - 1), n_components=2, random_state=SEED,
        n_epochs=UMAP_EPOCHS,
    )  # fmt: skip
    with warnings.catch_warnings():  # a seed makes UMAP single-threaded: it says so
        warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
        xy = np.asarray(reducer.fit_transform(reduced), dtype=np.float64)
    note = (
        f"UMAP (seed {SEED}, {reducer.n_neighbors} neighbours) on {pca.n_components_} "
        "principal components: near means near in the model's space; far gaps are not to "
        "scale; the query sits among its nearest chunks"
    )
    return _Fitted("umap", pca, reduced, xy, note, time.perf_counter() - started)


def layout(scope: MapScope, kind: str = "pca", *, query_vec: np.ndarray | None = None) -> Layout:
    """The joint layout of ``scope`` (see the module docstring); ``query_vec`` places the
    query (the same vector in every panel, so at the same place)."""
    if kind not in KINDS:
        raise ChunkscopeError(f"no projection {kind!r}: choose one of {', '.join(KINDS)}")
    fit_rows = scope.fit_rows
    digest = hash(tuple(scope.chunks[i].chunk_id for i in fit_rows))
    key = (scope.version, scope.model, scope.policy_key, scope.doc_id, scope.methods, kind, digest)
    fits: list[_Fitted] = []  # the fit made by this call, if any

    def fit() -> _Fitted:
        stacked = np.concatenate([_unit(scope.vectors[m][fit_rows]) for m in scope.methods])
        fits.append(_fit(kind, stacked))
        return fits[0]

    fitted = _FITTED.get_or_compute(key, fit)
    reused = not fits
    n, fit_n = len(scope.chunks), len(fit_rows)
    others = np.setdiff1d(np.arange(n), fit_rows)
    xy: dict[str, np.ndarray] = {}
    for i, method in enumerate(scope.methods):
        out = np.zeros((n, 2))
        out[fit_rows] = fitted.fitted_xy[i * fit_n : (i + 1) * fit_n]
        if len(others):
            out[others] = fitted.transform(_unit(scope.vectors[method][others]))
        xy[method] = out
    query_xy = None
    if query_vec is not None:
        qx, qy = fitted.transform(_unit(np.asarray(query_vec).reshape(1, -1)))[0]
        query_xy = (float(qx), float(qy))
    return Layout(
        kind=kind, xy=xy, query_xy=query_xy, note=fitted.note,
        fit_s=0.0 if reused else fitted.fit_s, reused=reused,
    )  # fmt: skip


def is_fitted(scope: MapScope, kind: str) -> bool:
    """True when ``layout(scope, kind)`` would answer from memory."""
    digest = hash(tuple(scope.chunks[i].chunk_id for i in scope.fit_rows))
    key = (scope.version, scope.model, scope.policy_key, scope.doc_id, scope.methods, kind, digest)
    return key in _FITTED
