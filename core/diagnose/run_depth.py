"""Any chunk's rank at full depth for one query of a saved evaluation run.

A run keeps its top ranks, not every score, so the run's corpus is rebuilt: the same
documents (by sha256) chunked under the run's policy give the same content-addressed
chunk ids, stacked in the run's order (``core.evaluate.corpus``). Each stored method's
chunk side is computed once (a dense method's vectors, a lexical method's BM25 index over
the whole corpus) and one query is scored as ``core.evaluate.scoring`` scores it: a dense
score is the query vector's dot product with the L2-normalised chunk vectors, a fusion
fuses its parts over the query's scope. Ranks are 1-based among the chunks of the scope
(every chunk, or the query's own document for a ``scope="doc"`` run), ties in corpus
order, so the best gold chunk's rank here is the run's ``full_ranks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from core import methods as registry
from core.diagnose.depth import FullRank
from core.evaluate.corpus import ChunkFn, Corpus, build_corpus
from core.evaluate.scoring import EmbedFn, Progress, Ticker, records_of
from core.protocols import TextEncoder
from core.provenance.types import Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache


class RunRanker:
    """Full-depth ranks of any chunk for any query over one run's corpus (see the module
    docstring). ``docs`` must hold every document of the run, by id, at its sha256."""

    def __init__(
        self,
        run: Any,
        docs: Mapping[str, Document],
        *,
        encoder: TextEncoder,
        chunker: ChunkFn,
        embed: EmbedFn | None = None,
        cache: VectorCache | None = None,
    ) -> None:
        missing = [d for d, sha in run.corpus.items() if getattr(docs.get(d), "sha256", "") != sha]
        if missing:
            raise ValueError(f"run {run.run_id} needs these documents as run: {missing}")
        if embed is None:
            from core.index.indexer import method_records

            embed = method_records
        self.run, self.encoder, self.embed, self.cache = run, encoder, embed, cache
        self.corpus: Corpus = build_corpus([docs[d] for d in run.corpus], chunker)
        self.row_of = {c.chunk_id: i for i, c in enumerate(self.corpus.chunks)}
        self._sides: dict[str, Any] = {}

    @property
    def prepared(self) -> bool:
        """Whether every stored method's chunk side is computed (``prepare`` has run; an
        external retriever has none: its ranks are in the run)."""
        return all(m in self._sides for m in registry.needs_indexing(self.run.methods))

    def prepare(self, progress: Progress | None = None) -> None:
        """Compute every stored method's chunk side now; ``progress`` gets ``(done,
        total)`` over chunks times stored methods (cache hits count as done)."""
        stored = registry.needs_indexing(self.run.methods)
        ticker = Ticker(len(self.corpus.chunks) * len(stored), progress)
        for method in stored:
            self._side(method, ticker)

    def _side(self, method: str, ticker: Ticker | None = None) -> Any:
        """A stored method's chunk side: the vector matrix, or the corpus's BM25 index."""
        if method not in self._sides:
            spec = registry.get(method)
            tick = ticker or Ticker(0, None)
            records = records_of(self.corpus, method, self.encoder, self.embed, self.cache, tick)
            if spec.family == "lexical":
                from core.methods.lexical import Bm25Index, indexed_text

                texts = [
                    indexed_text(r.prefix, c.text)
                    for r, c in zip(records, self.corpus.chunks, strict=True)
                ]
                self._sides[method] = Bm25Index.build(texts)
            else:
                rows = [np.asarray(r.vector, dtype=np.float32) for r in records]
                width = len(rows[0]) if rows else 0
                self._sides[method] = np.vstack(rows) if rows else np.zeros((0, width))
        return self._sides[method]

    def _scores(self, method: str, query: str, allowed: np.ndarray | None, qvec) -> np.ndarray:
        """``(n_chunks,)`` scores of ``query`` under ``method``, as the run scored them."""
        spec = registry.get(method)
        if spec.family == "fused":
            from core.methods.fusion import fuse_matrices

            parts = [self._scores(p, query, allowed, qvec)[None, :] for p in spec.parts]
            mask = None if allowed is None else allowed[None, :]
            return fuse_matrices(spec, parts, mask)[0]
        side = self._side(method)
        if spec.family == "lexical":
            return side.score_matrix([query])[0]
        return qvec() @ side.T

    def allowed(self, doc_id: str) -> np.ndarray | None:
        """The chunks a query on ``doc_id`` was ranked among (None: all of them)."""
        if self.run.scope != "doc":
            return None
        position = [d.doc_id for d, _ in self.corpus.chunks_by_doc].index(doc_id)
        return self.corpus.doc_index == position

    def full_depth(
        self, query: str, doc_id: str, chunk_id: str, *, k: int | None = None
    ) -> dict[str, FullRank]:
        """``chunk_id``'s rank under every method of the run for ``query`` (a query on
        ``doc_id``), with rank 1's and rank ``k``'s scores (``k``: the run's text k)."""
        k = k or self.run.text_k
        allowed = self.allowed(doc_id)
        encoded: list[np.ndarray] = []

        def qvec() -> np.ndarray:
            if not encoded:
                encoded.append(np.asarray(self.encoder.encode_texts([query]), np.float32)[0])
            return encoded[0]

        row = self.row_of.get(chunk_id)
        out = {}
        for method in self.run.methods:
            if registry.get(method).family == "external":
                out[method] = self._logged(method, query, chunk_id, k)
                continue
            scores = self._scores(method, query, allowed, qvec)
            out[method] = _full_rank(method, chunk_id, scores, allowed, row, k)
        return out

    def _logged(self, method: str, query: str, chunk_id: str, k: int) -> FullRank:
        """An external retriever's rank of the chunk: where its log put it for this query
        (the run's own query of that text), or beyond the log's depth."""
        record = next((q for q in self.run.queries if q.query == query), None)
        hits = list(record.top.get(method, ())) if record is not None else []
        depth = record.scope_size if record is not None else 0
        mine = next((h for h in hits if h.chunk_id == chunk_id), None)
        kth = next((h.score for h in hits if h.rank == k), None)
        return FullRank(
            method=method, chunk_id=chunk_id, rank=None if mine is None else mine.rank,
            score=None if mine is None else mine.score, scope_size=depth, k=k,
            top_score=hits[0].score if hits else None, kth_score=kth,
            beyond=None if mine is not None else depth,
        )  # fmt: skip

    def chunks_of(self, doc_id: str) -> Sequence[Any]:
        """The run's chunks of ``doc_id`` in text order."""
        return next((c for d, c in self.corpus.chunks_by_doc if d.doc_id == doc_id), [])


def _full_rank(
    method: str, chunk_id: str, scores: np.ndarray, allowed, row: int | None, k: int
) -> FullRank:
    keep = np.ones(len(scores), bool) if allowed is None else allowed
    scoped = np.where(keep, scores, -np.inf)
    inside = scores[keep]
    n = len(inside)
    kth = float(np.sort(inside)[::-1][min(k, n) - 1]) if n else None
    found = row is not None and bool(keep[row])
    rank = None
    if found:
        s = scoped[row]
        rank = int((scoped > s).sum() + (scoped[:row] == s).sum()) + 1
    return FullRank(
        method=method, chunk_id=chunk_id, rank=rank,
        score=float(scores[row]) if found else None, scope_size=n, k=k,
        top_score=float(inside.max()) if n else None, kth_score=kth,
    )  # fmt: skip
