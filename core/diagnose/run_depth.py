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
from core.index.indexer import method_records
from core.methods.lexical import Bm25Index, indexed_text
from core.protocols import TextEncoder
from core.provenance.types import Document
from core.retrieve.ranking import MemoryRanker, Ranking

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
            embed = method_records
        self.run, self.encoder, self.embed, self.cache = run, encoder, embed, cache
        self.corpus: Corpus = build_corpus([docs[d] for d in run.corpus], chunker)
        self._sides: dict[str, Any] = {}

    @property
    def prepared(self) -> bool:
        """Whether every stored method's chunk side is computed (``prepare`` has run; an
        external retriever has none: its ranks are in the run)."""
        return all(m in self._sides for m in self.run.stored_methods)

    def prepare(self, progress: Progress | None = None) -> None:
        """Compute every stored method's chunk side now; ``progress`` gets ``(done,
        total)`` over chunks times stored methods (cache hits count as done)."""
        stored = self.run.stored_methods
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

    def _scores(self, method: str, query: str, qvec: Any) -> np.ndarray:
        """``(n_chunks,)`` scores of ``query`` under a stored method, as the run scored them."""
        side = self._side(method)
        if registry.get(method).family == "lexical":
            return side.score_matrix([query])[0]
        return qvec() @ side.T

    def rows(self, doc_id: str) -> tuple[int, int]:
        """The rows ``[lo, hi)`` a query on ``doc_id`` was ranked among (all of them, for a
        run over the whole corpus)."""
        return self.corpus.rows(doc_id if self.run.scope == "doc" else None)

    def full_depth(
        self, query: str, doc_id: str, chunk_id: str, *, k: int | None = None
    ) -> dict[str, FullRank]:
        """``chunk_id``'s rank under every method of the run for ``query`` (a query on
        ``doc_id``), with rank 1's and rank ``k``'s scores (``k``: the run's text k)."""
        k = k or self.run.text_k
        lo, hi = self.rows(doc_id)
        ids = [c.chunk_id for c in self.corpus.chunks[lo:hi]]
        scored: dict[str, np.ndarray] = {}
        encoded: list[np.ndarray] = []

        def qvec() -> np.ndarray:
            if not encoded:
                encoded.append(np.asarray(self.encoder.encode_texts([query]), np.float32)[0])
            return encoded[0]

        def scores(method: str) -> np.ndarray:
            if method not in scored:
                scored[method] = self._scores(method, query, qvec)[lo:hi]
            return scored[method]

        ranker = MemoryRanker(ids, scores)  # as the run ranked it (core.evaluate.scoring)
        out = {}
        for method in self.run.methods:
            if self.run.method(method).family == "external":
                out[method] = self._logged(method, query, chunk_id, k)
                continue
            out[method] = _full_rank(method, chunk_id, ranker.rank(method, k), k)
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


def _full_rank(method: str, chunk_id: str, ranking: Ranking, k: int) -> FullRank:
    found = ranking.lookup(chunk_id)
    top = ranking.ranked[:k]
    return FullRank(
        method=method, chunk_id=chunk_id, rank=None if found is None else found[0],
        score=None if found is None else found[1], scope_size=ranking.size, k=k,
        top_score=top[0][2] if top else None, kth_score=top[-1][2] if top else None,
    )  # fmt: skip
