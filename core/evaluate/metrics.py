"""Retrieval metrics of one query under one method, and their means over a query set.

Definitions (``ranked`` is the method's ranking cut at the retrieval depth; a chunk is
*relevant* when it lies in the query's document and overlaps a gold span by at least one
character):

- ``hit@k``: 1 if a relevant chunk is in the top ``k``.
- ``recall@k``: share of the query's gold spans overlapped by some top-``k`` chunk.
- ``mrr``: ``1 / rank`` of the first relevant chunk, 0 when none is within the depth.
- ``ndcg@10``: binary gain (1 for a relevant chunk) discounted by ``1 / log2(rank + 1)``
  over the top 10, divided by the ideal DCG: ``min(R, 10)`` relevant chunks at ranks
  1, 2, ... where ``R`` is the number of relevant chunks in the ranked scope. 0 when
  ``R == 0`` (no chunk can be found for this label).
- ``precision`` / ``iou``: character-level, over the top ``text_k`` chunks: ``Rt`` is
  the union of their character spans (per document, overlaps counted once), ``G`` the
  union of the gold spans; ``precision = |Rt ∩ G| / |Rt|`` (0 when nothing was
  retrieved) and ``iou = |Rt ∩ G| / |Rt ∪ G|``.
- ``span_validity``: share of the top ``text_k`` citations that verify OK against the
  loaded documents (undefined when nothing was retrieved).
- ``duplicate_rate``: share of the top ``text_k`` chunks that repeat a higher-ranked one:
  more than 50% of the chunk's characters lie inside one higher-ranked chunk of the same
  document version, or both have the same text up to whitespace. Undefined when nothing
  was retrieved.
- ``doc_hit@k``: 1 if a top-``k`` chunk comes from the query's document (only computed
  when several documents compete).

Undefined values are ``None`` and are left out of the mean; every mean carries its own
query count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.provenance.cite import DUPLICATE_SHARE, SpanLike

NDCG_DEPTH = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricSpec:
    """Which cut-offs to compute: ``ks`` for hit/recall, ``text_k`` for the set measures."""

    ks: tuple[int, ...]
    text_k: int
    doc_level: bool

    @classmethod
    def for_ks(cls, ks: Sequence[int], *, doc_level: bool) -> MetricSpec:
        """``text_k`` is 5 when 5 is asked, else the largest k."""
        ordered = tuple(sorted(set(int(k) for k in ks)))
        if not ordered or ordered[0] < 1:
            raise ValueError("k values must be positive integers")
        return cls(ks=ordered, text_k=5 if 5 in ordered else ordered[-1], doc_level=doc_level)

    @property
    def depth(self) -> int:
        """How many ranked chunks a query keeps: enough for every k and for nDCG@10."""
        return max(self.ks[-1], NDCG_DEPTH, self.text_k)

    def names(self) -> list[str]:
        names = [f"hit@{k}" for k in self.ks] + [f"recall@{k}" for k in self.ks]
        names += ["mrr", "ndcg@10", "precision", "iou", "span_validity", "duplicate_rate"]
        if self.doc_level:
            names += [f"doc_hit@{k}" for k in self.ks]
        return names


def _overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


def _union(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        elif end > start:
            merged.append((start, end))
    return merged


def _intersection_size(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    total = 0
    for a_start, a_end in a:
        for b_start, b_end in b:
            total += max(0, min(a_end, b_end) - max(a_start, b_start))
    return total


def _text_scores(
    top: Sequence[SpanLike], gold_doc: str, gold: Sequence[tuple[int, int]]
) -> tuple[float, float]:
    gold_union = _union(gold)
    gold_size = sum(e - s for s, e in gold_union)
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for chunk in top:
        by_doc.setdefault(chunk.doc_id, []).append((chunk.char_start, chunk.char_end))
    retrieved = {doc: _union(spans) for doc, spans in by_doc.items()}
    retrieved_size = sum(e - s for spans in retrieved.values() for s, e in spans)
    inter = _intersection_size(retrieved.get(gold_doc, []), gold_union)
    precision = inter / retrieved_size if retrieved_size else 0.0
    union = retrieved_size + gold_size - inter
    return precision, (inter / union if union else 0.0)


def _squash(text: str) -> str:
    return " ".join(text.split())


def duplicate_flags(top: Sequence[SpanLike]) -> list[bool]:
    """Per chunk: does it repeat a higher-ranked chunk (see module docstring)?"""
    flags: list[bool] = []
    for i, chunk in enumerate(top):
        size = chunk.char_end - chunk.char_start
        squashed = _squash(chunk.text)
        repeat = False
        for earlier in top[:i]:
            if squashed and squashed == _squash(earlier.text):
                repeat = True
            elif size and (earlier.doc_id, earlier.doc_sha256) == (chunk.doc_id, chunk.doc_sha256):
                shared = min(chunk.char_end, earlier.char_end) - max(
                    chunk.char_start, earlier.char_start
                )
                repeat = shared > DUPLICATE_SHARE * size
            if repeat:
                break
        flags.append(repeat)
    return flags


def first_relevant_rank(
    ranked: Sequence[SpanLike], gold_doc: str, gold: Sequence[tuple[int, int]]
) -> int | None:
    """1-based rank of the first chunk overlapping a gold span, ``None`` if none is ranked."""
    for rank, chunk in enumerate(ranked, start=1):
        if chunk.doc_id == gold_doc and any(
            _overlaps(chunk.char_start, chunk.char_end, s, e) for s, e in gold
        ):
            return rank
    return None


def _ndcg(relevant: Sequence[bool], n_relevant: int) -> float:
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(n_relevant, NDCG_DEPTH)))
    if ideal == 0:
        return 0.0
    gained = sum(1.0 / math.log2(i + 2) for i, r in enumerate(relevant[:NDCG_DEPTH]) if r)
    return gained / ideal


def query_metrics(
    ranked: Sequence[SpanLike],
    *,
    gold_doc: str,
    gold: Sequence[tuple[int, int]],
    n_relevant: int,
    spec: MetricSpec,
    valid: Sequence[bool] | None = None,
) -> dict[str, float | None]:
    """All metrics of one query under one method.

    ``ranked`` is best first, cut at ``spec.depth`` or shorter; ``n_relevant`` counts the
    relevant chunks in the whole ranked scope (for the ideal nDCG); ``valid[i]`` says
    whether ``ranked[i]``'s citation verifies (all valid when omitted).
    """
    if not gold:
        raise ValueError("a query needs at least one gold span")
    relevant = [
        c.doc_id == gold_doc and any(_overlaps(c.char_start, c.char_end, s, e) for s, e in gold)
        for c in ranked
    ]
    out: dict[str, float | None] = {}
    for k in spec.ks:
        out[f"hit@{k}"] = float(any(relevant[:k]))
    for k in spec.ks:
        covered = sum(
            any(
                c.doc_id == gold_doc and _overlaps(c.char_start, c.char_end, s, e)
                for c in ranked[:k]
            )
            for s, e in gold
        )
        out[f"recall@{k}"] = covered / len(gold)
    rank = next((i + 1 for i, r in enumerate(relevant) if r), None)
    out["mrr"] = 1.0 / rank if rank else 0.0
    out["ndcg@10"] = _ndcg(relevant, max(n_relevant, sum(relevant)))
    top = ranked[: spec.text_k]
    out["precision"], out["iou"] = _text_scores(top, gold_doc, gold)
    checks = list(valid[: spec.text_k]) if valid is not None else [True] * len(top)
    out["span_validity"] = sum(checks) / len(checks) if checks else None
    out["duplicate_rate"] = sum(duplicate_flags(top)) / len(top) if top else None
    if spec.doc_level:
        for k in spec.ks:
            out[f"doc_hit@{k}"] = float(any(c.doc_id == gold_doc for c in ranked[:k]))
    return out


def aggregate(
    per_query: Sequence[Mapping[str, float | None]], names: Sequence[str]
) -> tuple[dict[str, float | None], dict[str, int]]:
    """Mean of each metric over the queries where it is defined, with that count."""
    means: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for name in names:
        values = [v for row in per_query if (v := row.get(name)) is not None]
        counts[name] = len(values)
        means[name] = sum(values) / len(values) if values else None
    return means, counts
