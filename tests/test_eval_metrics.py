"""Metrics against hand-computed cases."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from core.evaluate.metrics import (
    MetricSpec,
    aggregate,
    duplicate_flags,
    first_relevant_rank,
    query_metrics,
)

TEXT = {"a": "".join(chr(ord("a") + i % 26) for i in range(1000)), "b": "x" * 1000}


@dataclass(frozen=True)
class Span:
    doc_id: str
    char_start: int
    char_end: int
    doc_sha256: str = "sha"

    @property
    def text(self) -> str:
        return TEXT[self.doc_id][self.char_start : self.char_end]


SPEC = MetricSpec.for_ks((1, 5), doc_level=True)


def test_spec_picks_text_k_and_depth() -> None:
    assert SPEC.text_k == 5 and SPEC.depth == 10
    assert MetricSpec.for_ks((1, 3), doc_level=False).text_k == 3
    assert MetricSpec.for_ks((20, 1), doc_level=False).depth == 20
    assert "doc_hit@5" in SPEC.names()
    assert "doc_hit@5" not in MetricSpec.for_ks((5,), doc_level=False).names()
    with pytest.raises(ValueError):
        MetricSpec.for_ks((0,), doc_level=False)


def test_second_rank_hit_by_hand() -> None:
    ranked = [Span("a", 0, 50), Span("a", 150, 250), Span("b", 180, 300)]
    out = query_metrics(ranked, gold_doc="a", gold=[(100, 200)], n_relevant=2, spec=SPEC)
    assert out["hit@1"] == 0.0 and out["hit@5"] == 1.0
    assert out["recall@1"] == 0.0 and out["recall@5"] == 1.0
    assert out["mrr"] == 0.5
    # DCG = 1/log2(3); ideal with two relevant chunks = 1 + 1/log2(3)
    assert out["ndcg@10"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # retrieved chars: a 0-50 and 150-250 (150), b 180-300 (120); gold 100-200; shared 50
    assert out["precision"] == pytest.approx(50 / 270)
    assert out["iou"] == pytest.approx(50 / (270 + 100 - 50))
    assert out["doc_hit@1"] == 1.0
    assert first_relevant_rank(ranked, "a", [(100, 200)]) == 2


def test_same_span_in_another_document_is_not_relevant() -> None:
    ranked = [Span("b", 100, 200)]
    out = query_metrics(ranked, gold_doc="a", gold=[(100, 200)], n_relevant=1, spec=SPEC)
    assert out["hit@5"] == 0.0 and out["mrr"] == 0.0 and out["precision"] == 0.0
    assert out["doc_hit@5"] == 0.0
    assert first_relevant_rank(ranked, "a", [(100, 200)]) is None


def test_gold_split_by_two_chunks() -> None:
    ranked = [Span("a", 50, 150), Span("a", 150, 250)]
    out = query_metrics(ranked, gold_doc="a", gold=[(100, 200)], n_relevant=2, spec=SPEC)
    assert out["hit@1"] == 1.0 and out["recall@1"] == 1.0
    assert out["ndcg@10"] == pytest.approx(1.0)
    # retrieved 50-250 (200 chars) holds all 100 gold chars
    assert out["precision"] == pytest.approx(0.5) and out["iou"] == pytest.approx(0.5)


def test_multiple_gold_spans_recall_is_a_share() -> None:
    ranked = [Span("a", 0, 20), Span("a", 495, 520)]
    out = query_metrics(ranked, gold_doc="a", gold=[(0, 10), (500, 510)], n_relevant=2, spec=SPEC)
    assert out["recall@1"] == 0.5 and out["recall@5"] == 1.0
    assert out["precision"] == pytest.approx(20 / 45)
    assert out["iou"] == pytest.approx(20 / 45)


def test_empty_results() -> None:
    out = query_metrics([], gold_doc="a", gold=[(0, 10)], n_relevant=0, spec=SPEC)
    assert out["hit@1"] == 0.0 and out["recall@5"] == 0.0 and out["mrr"] == 0.0
    assert out["ndcg@10"] == 0.0 and out["precision"] == 0.0 and out["iou"] == 0.0
    assert out["span_validity"] is None and out["duplicate_rate"] is None


def test_ndcg_counts_only_the_top_ten_and_caps_the_ideal() -> None:
    misses = [Span("b", i, i + 1) for i in range(10)]
    out = query_metrics(
        [*misses, Span("a", 0, 5)], gold_doc="a", gold=[(0, 5)], n_relevant=1, spec=SPEC
    )
    assert out["ndcg@10"] == 0.0 and out["mrr"] == pytest.approx(1 / 11)
    twelve_relevant = [Span("a", i, i + 1) for i in range(12)]
    out = query_metrics(twelve_relevant, gold_doc="a", gold=[(0, 12)], n_relevant=12, spec=SPEC)
    assert out["ndcg@10"] == pytest.approx(1.0)
    alternating = [Span("a", 0, 1), Span("b", 0, 1), Span("a", 1, 2)]
    out = query_metrics(alternating, gold_doc="a", gold=[(0, 2)], n_relevant=2, spec=SPEC)
    assert out["ndcg@10"] == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))


def test_duplicate_rate_by_hand() -> None:
    top = [
        Span("a", 0, 100),
        Span("a", 40, 140),  # 60 of its 100 chars inside the first: duplicate
        Span("a", 90, 190),  # 50 of 100 inside the second, 10 in the first: not > 50%
        Span("a", 310, 410),
        Span("a", 520, 620),  # same text as the first (period 26), elsewhere: duplicate
    ]
    assert duplicate_flags(top) == [False, True, False, False, True]
    out = query_metrics(top, gold_doc="a", gold=[(0, 5)], n_relevant=1, spec=SPEC)
    assert out["duplicate_rate"] == pytest.approx(2 / 5)
    other_version = [Span("a", 0, 100), Span("a", 40, 140, doc_sha256="other")]
    assert duplicate_flags(other_version) == [False, False]


def test_span_validity_is_the_share_of_verified_citations() -> None:
    ranked = [Span("a", 0, 10), Span("a", 20, 30), Span("a", 40, 50)]
    out = query_metrics(
        ranked, gold_doc="a", gold=[(0, 5)], n_relevant=1, spec=SPEC, valid=[True, False, True]
    )
    assert out["span_validity"] == pytest.approx(2 / 3)


def test_text_scores_only_use_the_top_text_k() -> None:
    spec = MetricSpec.for_ks((1,), doc_level=False)
    ranked = [Span("a", 0, 10), Span("a", 100, 110)]
    out = query_metrics(ranked, gold_doc="a", gold=[(100, 110)], n_relevant=1, spec=spec)
    assert out["precision"] == 0.0 and out["mrr"] == 0.5 and "doc_hit@1" not in out


def test_aggregate_leaves_undefined_values_out_of_the_mean() -> None:
    means, counts = aggregate(
        [{"x": 1.0, "y": None}, {"x": 0.0, "y": None}, {"x": 0.5, "y": 1.0}], ["x", "y"]
    )
    assert means == {"x": 0.5, "y": 1.0} and counts == {"x": 3, "y": 1}
    means, counts = aggregate([{"x": None}], ["x"])
    assert means == {"x": None} and counts == {"x": 0}


def test_a_query_without_gold_is_refused() -> None:
    with pytest.raises(ValueError):
        query_metrics([Span("a", 0, 1)], gold_doc="a", gold=[], n_relevant=0, spec=SPEC)
