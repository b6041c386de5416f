"""How sure a sweep's findings are: a crossover is stated only when the bands separate on
both sides, a best cell at the grid's edge says so, a small set says how many more
queries would make the gap seen detectable; the Evaluate page's deltas say the same."""

from __future__ import annotations

import pytest

from core.evaluate import EvalConfig, read_queries
from core.evaluate.bootstrap import DeltaInterval, paired_bootstrap, queries_to_detect, verdict
from core.formats import load_document
from core.tune import parse_grid, run_sweep
from core.tune.curves import (
    Series,
    best_verdicts,
    crossovers,
    edge_note,
    past_window,
    policy_bests,
    policy_sentence,
    power_note,
)
from core.tune.sweep_records import ZERO_COST
from tests.fakes import FakeEncoder, fake_embed_chunks
from tests.tune.conftest import small_docs, small_set  # noqa: F401 (a fixture)

SIZES = (128, 256, 512)


def _series(method: str, means: list[float], spread: float) -> Series:
    return Series(
        method=method, metric="mrr", sizes=SIZES, means=tuple(means),
        lows=tuple(m - spread for m in means), highs=tuple(m + spread for m in means),
        costs=(ZERO_COST,) * 3, policy_keys=("a", "b", "c"),
    )  # fmt: skip


def test_a_crossover_inside_the_bands_is_no_clear_crossover() -> None:
    naive = _series("naive", [0.70, 0.58, 0.40], spread=0.2)  # 6 queries: wide bands
    late = _series("late", [0.50, 0.52, 0.60], spread=0.2)
    [found] = crossovers(late, naive, queries=6)
    assert not found.clear
    assert found.sentence("tokens").startswith("no clear crossover with 6 queries: ")
    steady = _series("naive", [0.5, 0.5, 0.5], spread=0.05)
    [sure] = crossovers(_series("late", [0.9, 0.55, 0.1], spread=0.05), steady, queries=60)
    assert sure.clear and sure.sentence("tokens").startswith("late beats naive on mrr below")


def test_bands_apart_on_one_side_only_are_not_clear() -> None:
    naive = _series("naive", [0.9, 0.52, 0.45], spread=0.05)
    late = _series("late", [0.5, 0.5, 0.5], spread=0.05)  # apart below; touching above
    [found] = crossovers(naive, late, queries=20)
    assert not found.clear


def test_a_small_delta_says_how_many_more_queries_would_show_it() -> None:
    a = [1.0, 0.0, 1.0, 0.5, 0.0, 1.0]
    b = [1.0, 0.5, 1.0, 0.5, 0.5, 1.0]
    delta = paired_bootstrap(a, b)
    assert delta is not None and delta.n == 6
    needed = queries_to_detect(delta)
    assert needed is not None
    words = verdict(delta)
    assert "clear" not in words  # 6 queries never make a clear finding
    assert words.startswith(("likely, on only 6 queries", "could be noise"))
    wide = DeltaInterval(delta=0.1, low=-0.2, high=0.4, n=6)
    assert queries_to_detect(wide) == 111  # 6 * ((1.96 + 0.84) * (0.3 / 1.96) / 0.1)^2
    assert verdict(wide) == "could be noise: ~105 more queries would show a Δ this size"
    many = DeltaInterval(delta=0.1, low=0.05, high=0.15, n=200)
    assert verdict(many) == "clear"
    assert verdict(DeltaInterval(delta=0.0, low=0.0, high=0.0, n=9)) == "no change"


@pytest.fixture
def sweep(small_set):  # noqa: F811
    grid = parse_grid(["fixed"], (300, 600, 1200), ("0",))
    return run_sweep(
        read_queries(small_set / "q.jsonl")[:8], [load_document(p) for p in small_docs()],
        grid, EvalConfig(policy=grid[0].policy, methods=("naive", "bm25"), ks=(1, 5)),
        encoder=FakeEncoder(), embed=fake_embed_chunks,
    )  # fmt: skip


def test_a_best_cell_at_the_edge_of_the_grid_says_which_sizes_to_try(sweep) -> None:
    by_size = {c.policy.size: c for c in sweep.cells() if c.method == "naive"}
    assert edge_note(sweep, by_size[1200]) == (
        "best at the largest size tried: try sizes above 1,200 chars"
    )
    assert edge_note(sweep, by_size[300]) == (
        "best at the smallest size tried: try sizes below 300 chars"
    )
    assert edge_note(sweep, by_size[600]) is None


def test_the_best_cell_never_overstates(sweep) -> None:
    best = best_verdicts(sweep, ["mrr", "hit@1"])
    for metric, b in best.items():
        cells = [c for c in sweep.cells() if c.metrics.get(metric) is not None]
        assert b.cell.metrics[metric] == max(c.metrics[metric] for c in cells)
        # equal means go to the smaller size, never to the largest (the cheapest)
        tied = [c for c in cells if c.metrics[metric] == b.cell.metrics[metric]]
        assert b.cell.policy.size == min(c.policy.size for c in tied)
        if len({c.policy.size for c in tied}) > 1:
            assert not b.clear
    # 8 queries: the intervals at 300, 600 and 1,200 overlap, and the verdict says so
    assert not best["mrr"].clear
    assert best["mrr"].verdict().startswith("no size is better than another at this sample")
    assert {c.policy.size for c in best["mrr"].rivals} - {best["mrr"].cell.policy.size}


def test_a_size_past_the_model_window_is_marked() -> None:
    assert past_window(512, "tokens", 254) and not past_window(254, "tokens", 254)
    assert not past_window(4000, "chars", 254)  # a char size is not known to be past it


def test_few_queries_get_a_power_note(sweep) -> None:
    from core.tune.curves import curves

    lines = curves(sweep, "mrr", "fixed", "0")
    note = power_note(lines, sweep, "chars")
    assert note is not None and note.startswith(f"only {sweep.points[0].run.n_queries} queries")
    assert " ahead of " in note
    assert note.endswith(("gap of that size detectable (80% power)", "confirm on 30+"))


@pytest.fixture
def two_policies(small_set):  # noqa: F811
    grid = [
        *parse_grid(["fixed"], (300, 1200), ("0",)),
        *parse_grid(["sentence"], (2, 5), ("0",)),
    ]
    return run_sweep(
        read_queries(small_set / "q.jsonl")[:8], [load_document(p) for p in small_docs()],
        grid, EvalConfig(policy=grid[0].policy, methods=("naive",), ks=(1, 5)),
        encoder=FakeEncoder(), embed=fake_embed_chunks,
    )  # fmt: skip


def test_two_policies_side_by_side_name_each_size_and_never_overstate(two_policies) -> None:
    best = best_verdicts(two_policies, ["mrr"])["mrr"]
    assert best.named
    words = best.verdict()
    if best.clear:
        assert f"({best.cell.policy.name}) leads" in words
    else:  # a rival of the other policy makes it "no policy ..."
        others = {c.policy.name for c in best.rivals} - {best.cell.policy.name}
        lead = "no policy is better" if others else "no size is better"
        assert words.startswith(lead) and f"({best.cell.policy.name})" in words
    bests = policy_bests(two_policies, "mrr")
    assert [b.best.cell.policy.name for b in bests] == sorted(
        ("fixed", "sentence"), key=lambda n: -max(
            c.metrics["mrr"] for c in two_policies.cells() if c.policy.name == n
        ),
    )  # fmt: skip
    for item in bests:  # each one's own best, its rivals of its own policy only
        assert {c.policy.name for c in item.best.rivals} <= {item.best.cell.policy.name}
        assert not item.best.named
    sentence = policy_sentence(bests, 8)
    overlap = not bests[0].apart
    assert sentence.startswith("no policy is better than another at this sample (8 queries)") == (
        overlap
    )
    assert policy_sentence(bests[:1], 8) == ""


def test_only_a_method_that_embeds_is_cut_by_the_window(sweep) -> None:
    import dataclasses

    from core.provenance.types import ChunkPolicy
    from core.tune.curves import cut_by_window

    big = ChunkPolicy(name="structure", size=512, overlap=0, unit="tokens")
    naive, bm25 = (
        dataclasses.replace(next(c for c in sweep.cells() if c.method == m), policy=big)
        for m in ("naive", "bm25")
    )
    assert cut_by_window(naive, 254)
    assert not cut_by_window(bm25, 254)  # BM25 reads every word of a long chunk
    assert not cut_by_window(naive, None)
