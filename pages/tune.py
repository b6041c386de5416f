"""Tune: sweep chunk sizes and overlaps, read retrieval against size per method, with cost."""

from __future__ import annotations

import streamlit as st

from core import defaults
from core.errors import ChunkscopeError
from core.render.tune_charts import COSTS, curve_figure
from core.tune.curves import (
    all_crossovers,
    best_verdicts,
    curves,
    policy_bests,
    policy_sentence,
    power_note,
    query_count,
)
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.frame import roles, sidebar
from workbench.state import EvalKey, TuneKey
from workbench.tune import sweep_panel as ut
from workbench.widgets import method_picker as meth
from workbench.widgets.wording import md

sidebar.entry("pages/tune.py")
ut.init_state()
K = TuneKey
st.title("Tune")
st.caption(
    "Evaluate a labelled set under every chunk size and overlap of a grid, then read what "
    "size does to retrieval, method by method, and what each point cost to index. Late "
    "chunking computes a document's token states once and only pools them at later sizes."
)
eng.require_encoder()
sweeps = ut.saved_sweeps()
busy = st.session_state[K.JOB] is not None and st.session_state[K.JOB].running
if roles.editing_enabled():
    with st.expander("Run a sweep", expanded=not sweeps, icon=":material/play_circle:"):
        sources = {"demo": "Demo datasheets (35 questions)"}
        if run_files.EVAL_DIR.is_dir():
            sources["shared"] = "Shared set (chunking_evaluation)"
        sources["upload"] = "Upload a query set"  # ranked over the library's documents
        source = st.segmented_control(
            "Labelled queries", list(sources), format_func=lambda s: sources[s], default="demo",
            key=EvalKey.SOURCE, required=True,
        )  # fmt: skip
        try:
            queries, docs = run_files.query_source(source)
            grid = ut.grid_controls()
        except ChunkscopeError as exc:
            st.error(md(exc), icon=":material/error:")
            queries, docs, grid = [], [], []
        offered = meth.offered_methods()
        default = [m for m in defaults.METHODS if m in offered]
        methods = st.multiselect("Methods", offered, default=default, key=K.METHODS)
        ready = bool(queries and docs and grid and methods)
        cost = ut.sweep_cost(docs, grid, methods) if ready and not busy else None
        st.caption(
            f"{len(grid)} points × {len(methods)} methods · {len(queries)} queries · "
            f"{len(docs)} documents"
        )
        if cost is not None:
            st.caption(f"Expected cost: {cost.sentence()}")
        if st.button("Sweep", type="primary", disabled=busy or not ready):
            ut.start_sweep(queries, docs, grid, methods)
    ut.job_panel()
if not sweeps:
    then = "run one above" if roles.editing_enabled() else "an editor runs them here"
    st.info(f"No sweep yet: {then}.", icon=":material/info:")
    st.stop()

if st.session_state[K.SWEEP] not in sweeps:
    st.session_state[K.SWEEP] = next(iter(sweeps))
sweep = sweeps[
    st.selectbox(
        "Sweep", list(sweeps), key=K.SWEEP, format_func=lambda s: ut.sweep_label(sweeps[s])
    )
]
if not sweep.points:
    st.stop()
names = list(sweep.points[0].run.metrics[sweep.methods[0]])
metrics = [m for m in ut.SHOWN_METRICS if m in names]
cells = st.columns(4)
metric = cells[0].selectbox("Metric", metrics, index=metrics.index("mrr"), key=K.METRIC)
policies = sorted({p.policy.name for p in sweep.points})
policy_name = cells[1].selectbox("Policy", policies, key=K.SHOWN_POLICY)
overlaps = sorted({p.overlap_asked for p in sweep.points if p.policy.name == policy_name})
overlap = cells[2].selectbox("Overlap", overlaps, key=K.SHOWN_OVERLAP)
cost_axis = cells[3].selectbox("Cost axis", list(COSTS), format_func=lambda c: COSTS[c], key=K.COST)
series = curves(sweep, metric, policy_name, overlap)
crossings = all_crossovers(series, query_count(sweep))
clear = [c for c in crossings if c.clear]  # drawn and stated; the others only named
unit = next(p.policy.unit for p in sweep.points if p.policy.name == policy_name)
window = ut.model_window()
event = st.plotly_chart(
    curve_figure(series, clear, unit=unit, cost=cost_axis, window=window), key=K.CHART,
    on_select="rerun",
    selection_mode="points", config={"displayModeBar": False},
)  # fmt: skip
ut.take_click(event)
st.caption(
    "Bands: 95% bootstrap intervals of each mean (queries resampled). Dotted lines on the "
    "right axis: what indexing each method cost at that size (a late point whose states "
    "were cached encodes 0 tokens). Click a marker to pick its cell."
)
for crossing in crossings:
    st.markdown(f"- {md(crossing.sentence(unit))}")
if not crossings and len(series) > 1:
    st.caption("No crossover: the methods keep their order at every size.")
if note := power_note(series, sweep, unit):
    st.info(md(note[0].upper() + note[1:] + "."), icon=":material/info:")

st.subheader("Best cell per metric")
st.dataframe(ut.best_rows(best_verdicts(sweep, metrics), sweep, window), hide_index=True)
if len(policies) > 1:  # the user's splitter beside ours: each one's best, side by side
    st.subheader(f"Each policy's best {metric}")
    bests = policy_bests(sweep, metric)
    st.dataframe(ut.policy_rows(bests, window), hide_index=True, key=K.POLICY_BESTS)
    st.markdown(md(policy_sentence(bests, query_count(sweep)) + "."))

st.subheader("Open a cell")
keys = [ut.cell_key(c) for c in sweep.cells()]
if st.session_state[K.CELL] not in keys:
    st.session_state[K.CELL] = keys[0]
picked = st.selectbox("Cell", keys, key=K.CELL, format_func=lambda k: k.replace("|", " · "))
cell = next(c for c in sweep.cells() if ut.cell_key(c) == picked)
st.caption(
    " · ".join(f"{m} {cell.metrics[m]:.3f}" for m in metrics if cell.metrics.get(m) is not None)
)
left, right = st.columns(2)
closed = not (roles.editing_enabled() or ut.run_saved(sweep, cell))
if left.button(
    "Its failures on the Evaluate page", icon=":material/fact_check:", disabled=closed,
    help="An editor opens a cell's failures first (that saves its run)" if closed else None,
):  # fmt: skip
    ut.open_failures(sweep, cell)
doc_ids = sorted(sweep.identity["corpus"])
shown_doc = right.selectbox("Document", doc_ids, key=K.DOC, label_visibility="collapsed")
if right.button("Its boundaries on the Chunks page", icon=":material/segment:"):
    ut.open_boundaries(sweep, cell, shown_doc)
