"""Second stage: rerank a wide candidate set with logged, visible features.

The first stage (``core.retrieve.comparison.compare``) ranks chunks by one method's score.
This stage takes a wider set of its candidates (say the top 5,000, or the whole scope) and scores
each one as a weighted sum of named features, every one of them kept per chunk so a user
can see why a chunk moved:

- ``score``: the first stage's score: a cosine as it is, in [-1, 1]; a score without
  fixed bounds (BM25, a fusion) min-max scaled to [0, 1] over the candidates, so one
  weight means the same on every method;
- ``citation``: citation readiness of the chunk's provenance: 1.0 when document id, hash
  and a non-empty span are present and the quote verifies against the loaded document;
  0.5 when they are present but the document is not loaded here (cannot be checked);
  0.0 when the span is missing or the citation is stale or mismatched;
- ``heading``: 1.0 when the chunk carries a heading path (its section is known), else 0;
- ``duplicate``: 1.0 when the chunk is a near-duplicate of a chunk ranked above it, else 0
  (its weight is negative: a repeat adds nothing a reader has not seen). "Near-duplicate"
  is the evaluation's definition (``core.evaluate.metrics.duplicate_flags``): the same
  text up to whitespace, or more than half of its characters inside one higher-ranked
  chunk of the same document version. "Above" means above in the order of every other
  feature's sum, so the flag does not depend on its own outcome.

A feature's *contribution* is ``weight * value``; the new score is the sum of the
contributions, and the new rank orders candidates by it (ties keep the first-stage order).
``rank_change = rank - first_rank``: negative means the chunk moved up, as in
``core.retrieve.comparison.RankChange``. No model is involved, so reranking is deterministic.

Every feature but ``score`` lies in [0, 1], so a candidate's new score lies within a
fixed band around its weighted first-stage score. ``rerank_top`` uses that band to read
only the candidates that can still reach the new top ``k`` (from the first-stage scores
alone), and keeps every candidate whose new place is then certain: the same places, in
the same order, with the same features as a rerank of all candidates gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np

from core import methods
from core.provenance.cite import DUPLICATE_SHARE, CitationStatus
from core.provenance.types import Document
from core.store.chroma_records import StoredHit

FEATURES: tuple[str, ...] = ("score", "citation", "heading", "duplicate")
FEATURE_HELP: dict[str, str] = {
    "score": "the method's cosine, or its BM25/fused score scaled to [0, 1]",
    "citation": "1 verified, 0.5 present but its document is not loaded, 0 stale/mismatch",
    "heading": "1 when the chunk carries a heading path",
    "duplicate": "1 when it repeats a higher-ranked chunk (the weight is negative)",
}
DEFAULT_CANDIDATES = 5000
UNVERIFIED = "unverified"  # citation present, but its document is not loaded


@dataclass(frozen=True, slots=True, kw_only=True)
class RerankWeights:
    """One weight per feature (same names as ``FEATURES``)."""

    score: float = 1.0
    citation: float = 0.05
    heading: float = 0.02
    duplicate: float = -0.1

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class RerankedChunk:
    """One candidate after reranking: its features, their contributions, both ranks.

    ``rank`` and ``first_rank`` are 1-based; ``duplicate_of`` names the higher-ranked
    chunk it repeats (None when it repeats none); ``citation_status`` is a
    ``CitationStatus`` value or ``"unverified"``.
    """

    hit: StoredHit
    first_rank: int
    rank: int
    features: Mapping[str, float]
    contributions: Mapping[str, float]
    score: float
    citation_status: str
    duplicate_of: str | None = None

    @property
    def chunk_id(self) -> str:
        return self.hit.chunk_id

    @property
    def rank_change(self) -> int:
        """``rank - first_rank``: negative when the second stage moved the chunk up."""
        return self.rank - self.first_rank


@dataclass(frozen=True, slots=True, kw_only=True)
class RerankResult:
    """Reranked candidates of one method, best first: all of them, or (``rerank_top``)
    the top places of ``considered`` candidates, each at its place among all of them."""

    method: str
    weights: RerankWeights
    chunks: tuple[RerankedChunk, ...]
    considered: int = 0

    @property
    def n_candidates(self) -> int:
        return max(self.considered, len(self.chunks))

    def top(self, k: int) -> list[RerankedChunk]:
        return list(self.chunks[:k])

    def ranks(self) -> dict[str, int]:
        """chunk_id -> rank after reranking."""
        return {c.chunk_id: c.rank for c in self.chunks}

    def moved(self) -> list[RerankedChunk]:
        """Chunks whose rank changed, biggest move first."""
        return sorted(
            (c for c in self.chunks if c.rank_change), key=lambda c: (-abs(c.rank_change), c.rank)
        )


def citation_readiness(hit: StoredHit, docs: Mapping[str, Document]) -> tuple[float, str]:
    """The ``citation`` feature of one hit and the status behind it (module docstring)."""
    has_span = 0 <= hit.char_start < hit.char_end and len(hit.text) == hit.char_end - hit.char_start
    if not (hit.doc_id and hit.doc_sha256 and has_span):
        return 0.0, CitationStatus.MISMATCH.value
    doc = docs.get(hit.doc_id)
    if doc is None:
        return 0.5, UNVERIFIED
    status = hit.citation.verify(doc)
    return (1.0 if status is CitationStatus.OK else 0.0), status.value


def near_duplicates(hits: Sequence[StoredHit]) -> list[str | None]:
    """For each hit (in the given order), the first earlier hit it repeats, or None.

    Same rule as ``core.evaluate.metrics.duplicate_flags`` (vectorised per document
    version, so thousands of candidates stay fast).
    """
    first_with_text: dict[str, int] = {}
    groups: dict[tuple[str, str], list[int]] = {}
    starts = np.array([h.char_start for h in hits], dtype=np.int64)
    ends = np.array([h.char_end for h in hits], dtype=np.int64)
    out: list[str | None] = []
    for i, hit in enumerate(hits):
        earlier: list[int] = []
        squashed = " ".join(hit.text.split())
        if squashed and squashed in first_with_text:
            earlier.append(first_with_text[squashed])
        size = hit.char_end - hit.char_start
        members = groups.setdefault((hit.doc_id, hit.doc_sha256), [])
        if size and members:
            rows = np.asarray(members, dtype=np.int64)
            shared = np.minimum(ends[rows], hit.char_end) - np.maximum(starts[rows], hit.char_start)
            over = np.flatnonzero(shared > DUPLICATE_SHARE * size)
            if over.size:
                earlier.append(int(rows[over[0]]))
        out.append(hits[min(earlier)].chunk_id if earlier else None)
        members.append(i)
        if squashed:
            first_with_text.setdefault(squashed, i)
    return out


def first_stage_scores(
    hits: Sequence[StoredHit], score_range: tuple[float, float] | None = None
) -> list[float]:
    """The ``score`` feature of each hit (see the module docstring); ``score_range`` is
    the (lowest, highest) score of all candidates when ``hits`` are only some of them."""
    raw = [h.score for h in hits]
    if not hits or methods.get(hits[0].method).score.kind == "cosine":
        return raw
    low, high = score_range or (min(raw), max(raw))
    return [(r - low) / (high - low) if high > low else 0.0 for r in raw]


def rerank(
    candidates: Sequence[StoredHit],
    *,
    docs: Mapping[str, Document] | None = None,
    weights: RerankWeights | None = None,
    method: str = "",
    score_range: tuple[float, float] | None = None,
) -> RerankResult:
    """Rerank first-stage ``candidates`` (best first) by the weighted features.

    ``docs`` maps doc_id to the loaded documents citations are verified against;
    ``score_range`` scales an unbounded score (see ``first_stage_scores``).
    """
    chosen = weights or RerankWeights()
    w = chosen.as_dict()
    loaded = docs or {}
    ordered = sorted(candidates, key=lambda h: h.rank)
    scores = first_stage_scores(ordered, score_range)
    base: list[dict[str, float]] = []
    statuses: list[str] = []
    for hit, score in zip(ordered, scores, strict=True):
        readiness, status = citation_readiness(hit, loaded)
        statuses.append(status)
        base.append(
            {"score": score, "citation": readiness, "heading": float(bool(hit.heading_path))}
        )
    partial = [sum(w[name] * value for name, value in feats.items()) for feats in base]
    prelim = sorted(range(len(ordered)), key=lambda i: (-partial[i], i))
    repeats = near_duplicates([ordered[i] for i in prelim])
    repeat_of = {i: repeats[pos] for pos, i in enumerate(prelim)}
    scored = []
    for i in range(len(ordered)):
        feats = base[i] | {"duplicate": float(repeat_of[i] is not None)}
        contrib = {name: w[name] * feats[name] for name in FEATURES}
        scored.append((sum(contrib.values()), i, feats, contrib))
    scored.sort(key=lambda row: (-row[0], row[1]))
    chunks = tuple(
        RerankedChunk(
            hit=ordered[i],
            first_rank=ordered[i].rank,
            rank=new_rank,
            features=feats,
            contributions=contrib,
            score=total,
            citation_status=statuses[i],
            duplicate_of=repeat_of[i],
        )
        for new_rank, (total, i, feats, contrib) in enumerate(scored, start=1)
    )
    return RerankResult(method=method, weights=chosen, chunks=chunks)


_SLACK = 1e-9  # below float rounding of a sum of four terms, far above none


def rerank_top(
    scores: Sequence[float],
    fetch: Callable[[list[int]], Sequence[StoredHit]],
    *,
    k: int,
    method: str,
    docs: Mapping[str, Document] | None = None,
    weights: RerankWeights | None = None,
) -> RerankResult:
    """The rerank of ``len(scores)`` first-stage candidates of ``method`` (``scores[i]``
    is rank ``i + 1``'s), reading only those that can reach the new top ``k``.

    ``fetch(ranks)`` returns the candidates at those 1-based first-stage ranks. With
    ``low``/``high`` a candidate's least and greatest possible new score (its weighted
    ``score`` feature plus every other weight's negative or positive part) and ``T`` the
    ``k``-th largest ``low``, only candidates with ``high >= T`` can end in the top ``k``;
    those are read and reranked. A candidate ranks below another only when that one's
    new score is higher, and a higher one has ``high >= T`` too, so each read candidate
    whose new score reaches ``T`` has its duplicate flag, score and place exactly as in a
    rerank of all candidates; the result keeps those (at least ``k``) and counts all.
    """
    chosen = weights or RerankWeights()
    w = chosen.as_dict()
    raw = np.asarray(scores, dtype=np.float64)
    n = len(raw)
    if not n:
        return RerankResult(method=method, weights=chosen, chunks=())
    low_raw, high_raw = float(raw.min()), float(raw.max())
    if methods.get(method).score.kind == "cosine":
        feature = raw
    elif high_raw > low_raw:
        feature = (raw - low_raw) / (high_raw - low_raw)
    else:
        feature = np.zeros(n)
    others = [w[name] for name in FEATURES if name != "score"]
    weighted = w["score"] * feature
    least = weighted + sum(min(0.0, v) for v in others)
    most = weighted + sum(max(0.0, v) for v in others)
    kept = min(max(k, 1), n)
    floor = float(np.partition(least, n - kept)[n - kept]) - _SLACK
    ranks = [int(i) + 1 for i in np.flatnonzero(most >= floor)]
    full = rerank(
        fetch(ranks), docs=docs, weights=chosen, method=method, score_range=(low_raw, high_raw)
    )
    certain = tuple(c for c in full.chunks if c.score >= floor)
    return RerankResult(method=method, weights=chosen, chunks=certain, considered=n)


def contribution_rows(result: RerankResult, k: int) -> list[dict[str, object]]:
    """The top ``k`` as table rows: ranks, the change, each feature's contribution, total."""
    rows = []
    for chunk in result.top(k):
        row: dict[str, object] = {
            "rank": chunk.rank,
            "was": chunk.first_rank,
            "moved": -chunk.rank_change,
        }
        row.update({name: round(chunk.contributions[name], 4) for name in FEATURES})
        row["total"] = round(chunk.score, 4)
        row["citation status"] = chunk.citation_status
        row["duplicate of"] = chunk.duplicate_of or ""
        row["chunk_id"] = chunk.chunk_id
        rows.append(row)
    return rows
