"""Evaluate & triage: metrics per method on a labelled set, then twenty failures by hand."""

from __future__ import annotations

import streamlit as st

from core.embed import METHODS
from core.errors import ChunkscopeError
from core.evaluate import CAUSES, EvalConfig, sample_failures
from core.evaluate.triage import CAUSE_HELP
from core.render.rank_charts import cause_bar_figure, rank_scatter_figure
from pages import _ui
from pages import _ui_engine as eng

_ui.entry("pages/evaluate.py")
eng.init_state()
K = eng.EKey
st.title("Evaluate & triage")
st.caption(
    "Run a labelled query set under several methods, read the numbers with their query "
    "counts and intervals, then read failures one at a time and tag why each one failed."
)
runs = eng.saved_runs()
with st.expander("Run an evaluation", expanded=not runs, icon=":material/play_circle:"):
    sources = {"demo": "Demo datasheets (35 questions)", "upload": "Upload JSONL"}
    if eng.EVAL_DIR.is_dir():
        sources = {"demo": sources["demo"], "shared": "Shared set (chunking_evaluation)"} | sources
    source = st.segmented_control(
        "Labelled queries", list(sources), format_func=sources.get, default="demo",
        key=K.EVAL_SOURCE, required=True,
    )  # fmt: skip
    try:
        queries, docs = eng.query_source(source)
    except ChunkscopeError as exc:
        st.error(str(exc), icon=":material/error:")
        queries, docs = [], []
    policy = _ui.policy_controls("eval", horizontal=True)
    cells = st.columns([3, 2, 2])
    methods = cells[0].multiselect(
        "Methods", eng.usable_methods(), eng.usable_methods(), key=K.EVAL_METHODS
    )
    ks = cells[1].multiselect("k", [1, 3, 5, 10, 20], [1, 5, 10], key=K.EVAL_KS)
    scope = cells[2].radio("Rank over", ("corpus", "doc"), key=K.EVAL_SCOPE, horizontal=True,
                           format_func={"corpus": "all documents", "doc": "its document"}.get)  # fmt: skip
    st.caption(f"{len(queries)} queries over {len(docs)} document(s).")
    if st.button("Run", type="primary", disabled=not (queries and methods and ks)):
        try:
            config = EvalConfig(policy=policy, methods=tuple(methods), ks=tuple(ks), scope=scope)
            eng.run_evaluation(queries, docs, config)
            runs = eng.saved_runs()
        except ChunkscopeError as exc:
            st.error(str(exc), icon=":material/error:")
if not runs:
    st.info("No run yet: run the demo set above (a minute on this machine).")
    st.stop()
if st.session_state[K.RUN] not in runs:
    st.session_state[K.RUN] = next(iter(runs))
run = runs[st.selectbox("Run", list(runs), key=K.RUN, format_func=lambda r: eng.run_label(runs[r]))]
docs = st.session_state[K.RUN_DOCS].get(run.run_id) or eng.documents_for(dict(run.corpus))
if run.unresolved:
    st.warning(f"{len(run.unresolved)} queries did not resolve to a span and were left out.")

st.subheader(f"Metrics: {run.n_queries} queries, {', '.join(run.methods)}")
left, right = st.columns([3, 2], gap="medium")
left.dataframe(
    eng.metric_rows(run),
    hide_index=True,
    height=min(600, 36 * (len(run.metrics[run.methods[0]]) + 1)),
)
with right:
    st.dataframe(eng.delta_rows(run), hide_index=True, height=360)
    pair = [m for m in ("naive", "late") if m in run.methods] or list(run.methods[:2])
    if len(pair) == 2:
        points = [(q.id, q.query, q.ranks[pair[0]], q.ranks[pair[1]]) for q in run.queries]
        fig = rank_scatter_figure(points, x_method=pair[0], y_method=pair[1], depth=run.depth,
                                  selected=st.session_state[K.QUERY_ID])  # fmt: skip
        st.plotly_chart(fig, key="cs_eval_scatter", selection_mode="points",
                        on_select=lambda: eng.on_query_select("cs_eval_scatter"),
                        config={"displayModeBar": False})  # fmt: skip
if st.session_state[K.QUERY_ID] in {q.id for q in run.queries}:
    st.subheader("Query")
    eng.query_card(run, run.query(st.session_state[K.QUERY_ID]), docs)

st.subheader("Failure reader")
cells = st.columns([2, 1, 3])
failing = [m for m in METHODS if m in run.methods]
if st.session_state[K.TRIAGE_METHOD] not in failing:
    st.session_state[K.TRIAGE_METHOD] = "late" if "late" in failing else failing[0]
method = cells[0].selectbox("Failures of", failing, key=K.TRIAGE_METHOD, on_change=eng.reset_triage)
seed = int(cells[1].number_input("Seed", 0, 9999, key=K.TRIAGE_SEED, on_change=eng.reset_triage))
triage = eng.triage_store()
sample = (
    sample_failures(run, method, n=20, seed=seed, store=triage)
    if any(q.failed[method] for q in run.queries)
    else []
)
if not sample:
    st.success(f"No failures under {method}: every query has gold in its top {run.text_k}.")
    st.stop()
pos = min(st.session_state[K.TRIAGE_POS], len(sample) - 1)
done = sum(f.tag is not None for f in sample)
cells[2].progress(done / len(sample), text=f"{done} of {len(sample)} read")
failure = sample[pos]
st.markdown(
    f"**Failure {pos + 1} of {len(sample)}** · under {method}, gold not in the top {run.text_k}"
)
eng.query_card(run, run.query(failure.query_id), docs)
note_key = f"cs_note_{run.run_id}_{failure.query_id}"
st.session_state.setdefault(note_key, failure.tag.note if failure.tag else "")
st.text_input("Note (saved with the tag)", key=note_key)
buttons = st.columns(len(CAUSES) + 2)
buttons[0].button(
    "Previous",
    icon=":material/arrow_back:",
    shortcut="Left",
    on_click=eng.step,
    args=(-1, len(sample)),
)
for i, cause in enumerate(CAUSES, start=1):
    chosen = failure.tag is not None and failure.tag.cause == cause
    buttons[i].button(
        f"{i} {cause}", key=f"cs_tag_{cause}", help=CAUSE_HELP[cause], shortcut=str(i),
        type="primary" if chosen else "secondary", on_click=eng.tag_failure,
        args=(run, failure, cause, note_key, len(sample)),
    )  # fmt: skip
buttons[-1].button(
    "Next",
    icon=":material/arrow_forward:",
    shortcut="Right",
    on_click=eng.step,
    args=(1, len(sample)),
)
if failure.tag:
    st.caption(
        f"Tagged **{failure.tag.cause}** at {failure.tag.tagged_at}. Press 1-6 to change, ←/→ to move."
    )
else:
    st.caption("Not tagged yet. Keys: 1-6 tag (and move on), ← previous, → next.")

chart, files = st.columns([3, 2], gap="medium")
chart.plotly_chart(
    cause_bar_figure(triage.tag_counts(run.run_id), n_sampled=len(sample)),
    config={"displayModeBar": False},
)
with files:
    st.markdown("**Export the tagged set**")
    st.caption("JSONL lines are query-set lines again: the regression set of the next run.")
    stem = f"triage-{run.run_id}"
    st.download_button(
        "Download JSONL",
        eng.export_bytes(run, ".jsonl"),
        f"{stem}.jsonl",
        "application/jsonl",
        icon=":material/download:",
    )
    st.download_button(
        "Download CSV",
        eng.export_bytes(run, ".csv"),
        f"{stem}.csv",
        "text/csv",
        icon=":material/download:",
    )
