"""The Compare page's view model, without Streamlit: choices reconcile to valid ones, the
runnable methods are those whose parts are indexed, and the chunk picked by default is
the one that moved most."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace as NS

from core.chunk import default_policy
from workbench.engine import compare_model as model

FIXED, STRUCTURE = default_policy("fixed"), default_policy("structure")


def _entry(doc_id: str, method: str, policy=FIXED) -> NS:
    return NS(doc_id=doc_id, method=method, policy=policy, policy_key=policy.key)


ENTRIES = [
    _entry("b", "naive"), _entry("a", "naive"), _entry("a", "bm25"),
    _entry("c", "late", STRUCTURE),
]  # fmt: skip


def test_the_model_imports_no_streamlit() -> None:
    code = "import sys, workbench.engine.compare_model; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_policy_scope_and_methods_reconcile_to_what_is_indexed() -> None:
    state: dict = {"p": "gone-chars-1-0", "s": "c", "m": ["naive", "dropped", "bm25"]}
    policies = model.reconcile_policy(state, "p", ENTRIES)
    assert list(policies) == [FIXED.key, STRUCTURE.key] and state["p"] == FIXED.key
    state["p"] = STRUCTURE.key
    assert model.reconcile_policy(state, "p", ENTRIES) and state["p"] == STRUCTURE.key  # kept
    docs = model.documents_under(ENTRIES, FIXED.key)
    assert docs == ["a", "b"]
    assert model.reconcile_scope(state, "s", docs, "ALL") == ["ALL", "a", "b"]
    assert state["s"] == "ALL"  # c is not under the fixed policy
    state["s"] = "b"
    model.reconcile_scope(state, "s", docs, "ALL")
    assert state["s"] == "b"
    model.reconcile_methods(state, "m", ["naive", "bm25", "late"])
    assert state["m"] == ["naive", "bm25"]


def test_runnable_methods_need_every_stored_part() -> None:
    everywhere = model.stored_methods(ENTRIES, FIXED.key, None)
    assert everywhere == {"naive", "bm25"}
    assert model.stored_methods(ENTRIES, FIXED.key, "b") == {"naive"}
    chosen = ["late", "hybrid(naive,bm25;rrf60)", "naive"]
    assert model.runnable(chosen, everywhere) == (
        ["hybrid(naive,bm25;rrf60)", "naive"], ["late"]
    )  # fmt: skip
    assert model.runnable(chosen, {"naive"}) == (["naive"], ["late", "hybrid(naive,bm25;rrf60)"])


def test_demo_query_and_rerank_choice() -> None:
    assert model.demo_query_misfits("pump", "pump", ["ledger"], ["hx40", "pv2"])
    assert not model.demo_query_misfits("pump", "pump", ["hx40"], ["hx40", "pv2"])
    assert not model.demo_query_misfits("ledger", "pump", ["ledger"], ["hx40"])
    state: dict = {"r": "bm25"}
    model.reconcile_rerank(state, "r", ["naive", "late"])
    assert state["r"] == "late"
    model.reconcile_rerank(state, "r", ["naive", "late"])
    assert state["r"] == "late"


def _hit(chunk_id: str, score: float) -> NS:
    return NS(chunk_id=chunk_id, score=score, heading_path=(chunk_id.upper(),))


def _change(chunk_id: str, delta: int | None, at: dict) -> NS:
    ranks = {m: rank for m, (rank, _) in at.items()}
    scores = {m: score for m, (_, score) in at.items()}
    return NS(chunk_id=chunk_id, delta=delta, ranks=ranks, scores=scores)


def test_picks_offer_ranked_then_extra_chunks_and_default_to_the_most_moved() -> None:
    wide = NS(
        methods=["naive", "bm25"],
        results={
            "naive": [_hit("x", 0.9), _hit("y", 0.8), _hit("z", 0.1)],
            "bm25": [_hit("y", 7.0), _hit("x", 3.0), _hit("w", 1.0)],
        },
        rank_changes=[
            _change("x", 1, {"naive": (1, 0.9), "bm25": (2, 3.0)}),
            _change("y", -1, {"naive": (2, 0.8), "bm25": (1, 7.0)}),
            _change("w", None, {"naive": (None, None), "bm25": (3, 1.0)}),
            _change("z", 5, {"naive": (3, 0.1), "bm25": (8, 0.0)}),
        ],
    )  # fmt: skip
    changes = {c.chunk_id: c for c in wide.rank_changes[:3]}  # z is not shown at this k
    offered = model.picks(wide, changes, {"z", "x"}, lambda h: h.heading_path[0])
    assert list(offered.labels) == ["x", "y", "w", "z"]  # shown first, then the extras
    assert offered.labels["w"] == "W" and offered.moved == "x"  # |1| ties |-1|: first kept
    state: dict = {"sel": "gone"}
    assert model.reconcile_selected(state, "sel", offered) == "x"
    state["sel"] = "w"
    assert model.reconcile_selected(state, "sel", offered) == "w"
    assert model.score_marks(wide, changes["w"], "W") == [("bm25", 3, 1.0, "W")]
    assert model.score_marks(wide, None, "Z") == []
    curves, scales = model.score_curves(wide)
    assert curves == {"naive": [0.9, 0.8, 0.1], "bm25": [7.0, 3.0, 1.0]}
    assert scales["naive"].kind == "cosine" and scales["bm25"].kind == "bm25"
    assert set(model.slope_ranks(wide, offered.labels)) == {"x", "y", "w", "z"}


def test_the_untouched_default_opens_on_the_indexed_methods_only() -> None:
    default = ["naive", "late", "contextual", "bm25"]
    stored = {"naive", "late", "bm25"}
    assert model.narrowed_default(default, default, stored) == ["naive", "late", "bm25"]
    mine = ["naive", "contextual"]  # the user's own choice is kept, warning and all
    assert model.narrowed_default(mine, default, stored) == mine
    assert model.narrowed_default(default, default, set()) == default  # nothing to narrow to
