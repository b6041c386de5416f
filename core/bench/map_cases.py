"""Compare and Map cases at scale, over synthetic collections of ``store_cases``.

- ``compare``: ``core.retrieve.comparison.compare`` with the five methods the Compare page offers
  first (``COMPARED``: three dense, ``bm25`` and a fusion) over ``n`` synthetic records
  each, as the page asks it now (every method ranked ``PAGE_DEPTH`` deep for its score
  curve and rerank stage, the top ``PAGE_K`` read as records) against the page's old
  call in the same run (the top ``PAGE_DEPTH`` of every method read as records, then cut
  to ``PAGE_K``); both show the same ranks. Target: p50 at most ``COMPARE_LIMIT_S``.
  The dense collections are the synthetic one of ``store_cases`` and two twins with the
  same ids, spans and texts and other random vectors; ``bm25`` is ``lexical_cases``'
  twin. Query vectors are seeded random unit vectors (the store never looks at what
  they mean), the query words three words of the headline document.
- ``map``: ``core.projection`` over ``MAP_POINTS`` points (chunks of the synthetic
  collection, sampled with its seed), vectors read once (timed apart): the PCA layout
  (target ``PCA_LIMIT_S``) against scikit-learn's PCA on the same matrix, and the UMAP
  layout (target ``UMAP_LIMIT_S``) against umap-learn's defaults on the same matrix.
  Numba compiles UMAP's kernels on a process's first fit: two small fits (one past
  4,096 points, where UMAP switches to NN-descent) run first and their time is
  reported apart.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from core import methods as registry
from core.bench.inputs import BenchInputs
from core.bench.lexical_cases import _ensure_lexical
from core.bench.report import CaseResult
from core.bench.store_cases import DENSE, SEED, _ensure_scale, _unit_vectors, _with_extra, model_dim
from core.bench.timing import interleaved, timed
from core.defaults import COMPARED
from core.methods import BENCHED
from core.projection import fit, layout, read_scope
from core.retrieve.comparison import compare
from core.store import ChunkStore, scan

PAGE_DEPTH = 5000  # workbench.engine.resources.WIDE
PAGE_K = 10
COMPARE_LIMIT_S = 1.0
COMPARE_QUERIES = 5  # the old call takes seconds a round at 100k: few rounds


def twins() -> tuple[str, ...]:
    """The dense methods of ``COMPARED`` besides the synthetic collection's own: each gets
    a twin collection."""
    stored = registry.needs_indexing(COMPARED)
    return tuple(m for m in stored if registry.get(m).family == "dense" and m != DENSE)


MAP_POINTS = 10_000
PCA_LIMIT_S = 1.0
UMAP_LIMIT_S = 30.0


class _Encoder:
    """Stands in for the model: a seeded unit vector per query text."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def encode_query(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "big")
        return _unit_vectors(1, self.dim, SEED + 100 + seed % 10_000)[0]


def _ensure_twin(store: Any, model: str, policy: Any, method: str, n: int) -> float | None:
    """A dense twin of the synthetic collection under ``method`` (same ids, spans and
    texts, other vectors); its build time, None when reused."""
    name = store.collection_name(model, method, policy)
    col = store.client.get_or_create_collection(
        name, metadata={"hnsw:space": "cosine", "model": model}, embedding_function=None
    )
    if col.count() == n:
        return None
    source = store.client.get_collection(
        store.collection_name(model, DENSE, policy), embedding_function=None
    )
    salt = sum(map(ord, method))

    def fill() -> None:
        batch = int(store.client.get_max_batch_size())
        for number, page in enumerate(scan.iter_pages(source, include=["metadatas", "documents"])):
            for lo in range(0, len(page["ids"]), batch):
                hi = lo + batch
                metas = [{**m, "method": method} for m in page["metadatas"][lo:hi]]
                vectors = _unit_vectors(len(metas), model_dim(), SEED + salt + 7 * number + lo)
                col.upsert(
                    ids=page["ids"][lo:hi], embeddings=vectors, metadatas=metas,
                    documents=page["documents"][lo:hi],
                )  # fmt: skip

    elapsed, _ = timed(fill)
    return elapsed


def compare_store(inputs: BenchInputs, n: int) -> tuple[Any, str, Any, dict[str, float | None]]:
    """The store, model and policy of ``n`` synthetic records under every method of
    ``COMPARED``, and each collection's build time (None: reused)."""
    s = inputs.settings
    doc = inputs.document(s.pdf)
    store = ChunkStore.open(s.cache_dir / "scale")
    model, policy, built = _ensure_scale(store, doc, n)
    builds: dict[str, float | None] = {DENSE: built}
    for method in twins():
        builds[method] = _ensure_twin(store, model, policy, method, n)
    builds[BENCHED.lexical] = _ensure_lexical(store, doc, n, model, policy)
    return store, model, policy, builds


def compare_case(inputs: BenchInputs, n: int) -> CaseResult:
    s = inputs.settings
    store, model, policy, builds = compare_store(inputs, n)
    encoder = _Encoder(model, model_dim())
    words = inputs.document(s.pdf).text.split()
    rng = np.random.default_rng(SEED + 5)
    starts = rng.integers(0, max(1, len(words) - 3), size=2 + COMPARE_QUERIES)
    queries = [" ".join(words[a : a + 3]) for a in starts]
    ask = dict(methods=COMPARED, encoder=encoder, store=store, policy=policy)

    def new(step: int) -> Any:
        return compare(queries[step], k=PAGE_K, depth=PAGE_DEPTH, **ask)

    def old(step: int) -> Any:
        return compare(queries[step], k=PAGE_DEPTH, **ask)

    shown: dict[int, Any] = {}

    def check(name: str, result: Any) -> None:  # both show the same top k
        tops = tuple(tuple(h.chunk_id for h in result.results[m][:PAGE_K]) for m in COMPARED)
        if max(result.scope_sizes.values()) != n:
            raise AssertionError(f"the comparison searched {result.scope_sizes}, not {n:,}")
        key = hash(result.query)
        if shown.setdefault(key, tops) != tops:
            raise AssertionError(f"the page's call and the old one differ for {result.query!r}")

    first_s, _ = timed(lambda: new(0))  # loads the lexical index, warms the HNSW files
    t = interleaved({"ours": new, "raw": old}, warmup=1, repeats=COMPARE_QUERIES, check=check)
    reused = ", ".join(
        f"{m} {'reused' if b is None else f'built in {b:.0f} s'}" for m, b in builds.items()
    )
    row = CaseResult(
        key=f"compare:page:{n}",
        case="compare",
        label=f"Compare page call, {len(COMPARED)} methods, {n:,} chunks each",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label=f"old call (top {PAGE_DEPTH:,} read per method)",
        max_ours=COMPARE_LIMIT_S,
        target=f"<= {COMPARE_LIMIT_S:.0f} s",
        notes=(
            f"{COMPARE_QUERIES} queries, top {PAGE_K} read, ranked {PAGE_DEPTH:,} deep; p95 "
            f"ours {t['ours'].percentile_s(95):.2f} s, old {t['raw'].percentile_s(95):.2f} s; "
            f"first call {first_s:.1f} s; collections: {reused}",
        ),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )
    return _with_extra(row, {"first_s": first_s, "vectors": n})


def _map_scope(inputs: BenchInputs, n: int) -> tuple[Any, float]:
    """``MAP_POINTS`` chunks of the synthetic collection of ``n`` records (a seeded
    sample when larger) and the time their vectors took to read."""
    s = inputs.settings
    store = ChunkStore.open(s.cache_dir / "scale")
    model, policy, _ = _ensure_scale(store, inputs.document(s.pdf), n)
    read_s, drawn = timed(
        lambda: read_scope(
            store, model=model, methods=[DENSE], policy=policy, max_points=MAP_POINTS
        )
    )
    return drawn, read_s


def _forget_fits() -> None:
    fit._FITTED.clear()


def map_cases(inputs: BenchInputs, n: int) -> list[CaseResult]:
    """The PCA and UMAP rows of ``MAP_POINTS`` points drawn from ``n`` records."""
    from sklearn.decomposition import PCA  # type: ignore[import-untyped]

    s = inputs.settings
    drawn, read_s = _map_scope(inputs, n)
    points = len(drawn.chunks) * len(drawn.methods)
    matrix = drawn.vectors[DENSE]
    query = _unit_vectors(1, model_dim(), SEED + 6)[0]

    def ours_pca(step: int) -> Any:
        _forget_fits()
        return layout(drawn, "pca", query_vec=query)

    def raw_pca(step: int) -> Any:
        return PCA(n_components=2, random_state=SEED).fit_transform(matrix)

    t = interleaved({"ours": ours_pca, "raw": raw_pca}, warmup=1, repeats=s.repeats)
    where = f"{drawn.sample_line()}; vectors read in {read_s:.1f} s (once, apart)"
    pca_row = CaseResult(
        key=f"map:pca:{points}",
        case="map",
        label=f"map layout, PCA, {points:,} points",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="scikit-learn PCA of the same matrix",
        max_ours=PCA_LIMIT_S,
        target=f"<= {PCA_LIMIT_S:.0f} s",
        notes=(f"ours: unit rows, joint fit, query placed; {where}",),
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )
    return [pca_row, _umap_row(drawn, matrix, query, points, where)]


def _umap_row(drawn: Any, matrix: np.ndarray, query: np.ndarray, points: int, where: str):
    import umap  # type: ignore[import-untyped]

    warm = _unit_vectors(4500, 50, SEED + 7)  # past 4,096 points UMAP searches neighbours
    compile_s, _ = timed(  # with NN-descent: both paths compiled before the timed fits
        lambda: (
            umap.UMAP(random_state=SEED, n_epochs=10).fit_transform(warm),
            umap.UMAP(random_state=SEED, n_epochs=10).fit_transform(warm[:300]),
        )
    )
    _forget_fits()
    ours_s, lay = timed(lambda: layout(drawn, "umap", query_vec=query))
    raw_s, _ = timed(lambda: umap.UMAP(random_state=SEED).fit_transform(matrix))
    if lay.xy[DENSE].shape != (len(drawn.chunks), 2) or not np.isfinite(lay.xy[DENSE]).all():
        raise AssertionError("the UMAP layout is not one finite position per chunk")
    return CaseResult(
        key=f"map:umap:{points}",
        case="map",
        label=f"map layout, UMAP, {points:,} points",
        ours=ours_s,
        baseline=raw_s,
        baseline_label="umap-learn defaults on the same matrix",
        max_ours=UMAP_LIMIT_S,
        target=f"<= {UMAP_LIMIT_S:.0f} s",
        notes=(
            f"one round each (seed {SEED}); ours: {lay.note}; numba compiled first in "
            f"{compile_s:.0f} s (two small fits, not counted); {where}",
        ),
        ours_samples=(ours_s,),
        baseline_samples=(raw_s,),
        extra={"compile_s": compile_s},
    )
