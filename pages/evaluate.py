"""Evaluate & triage: metrics per method on a labelled set, then twenty failures by hand."""

from __future__ import annotations

import streamlit as st

from core import methods as registry
from core.evaluate import CAUSES, agreement, sample_failures
from core.evaluate.triage import CAUSE_HELP, default_method, default_pair
from core.render.failure_charts import cause_bar_figure, rank_scatter_figure
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.evaluate import eval_form, run_import, triage, why
from workbench.frame import roles, sidebar
from workbench.state import EvalKey, failure_note_key, tag_widget, tagged_export_widget
from workbench.widgets import result_cards as ins
from workbench.widgets import wording

sidebar.entry("pages/evaluate.py")
run_files.init_state()
K = EvalKey
NO_BAR = {"displayModeBar": False}
st.title("Evaluate & triage")
st.caption(
    "Run a labelled query set under several methods, read the numbers with their query "
    "counts and intervals, then read failures one at a time and tag why each one failed."
)
eng.require_encoder()
runs = run_files.saved_runs()
editing = roles.editing_enabled()  # a viewer reads runs and failures; editors run and tag
if editing:  # a viewer reads runs; the forms that make them are an editor's
    with st.expander("Run an evaluation", expanded=not runs, icon=":material/play_circle:"):
        runs = eval_form.evaluation_form() or runs
if editing:
    with st.expander("Import a run of your retriever", icon=":material/input:"):
        run_import.import_form()
        runs = run_files.saved_runs()
if not runs:
    st.info(eval_form.no_run_line(editing))
    st.caption(
        f"Runs that `chunkscope eval` and `chunkscope import-run` make with this store are "
        f"listed here too: they are kept in {wording.md(str(run_files.runs_dir()))}."
    )
    st.stop()
run_files.open_linked_run(runs)  # ?run=RUN_ID: what `chunkscope open` starts on
if st.session_state[K.RUN] not in runs:
    st.session_state[K.RUN] = next(iter(runs))
run = runs[
    st.selectbox("Run", list(runs), key=K.RUN, format_func=lambda r: run_files.run_label(runs[r]))
]
docs = st.session_state[K.RUN_DOCS].get(run.run_id) or run_files.documents_for(dict(run.corpus))
if docs and (unknown := run_files.unknown_policy(run)):
    st.info(
        f"This run's chunks come from {wording.md(unknown)}, which this session cannot chunk "
        "with (an imported set this store does not hold, or a splitter not installed here): "
        "its failures are shown with what the run stored, not on their pages (`chunkscope "
        "open RUN.json` from the store that imported a set brings it along).",
        icon=":material/info:",
    )
    docs = {}
if run.unresolved:
    st.warning(f"{len(run.unresolved)} queries did not resolve to a span and were left out.")
run_import.imported_note(run)
run_import.pending_panel(run)  # our methods still being added to an imported run

st.subheader(f"{run.n_queries} queries · policy {run.policy_label} · top {run.text_k}")
left, right = st.columns([3, 2], gap="medium")
metric_rows = eval_form.metric_table(run)  # whole tables: no row hides below a fold
left.dataframe(metric_rows, hide_index=True, height=wording.table_height(len(metric_rows)))
if unscored := eval_form.unscored_note(run):
    left.caption(unscored)
pair = [m for m in registry.PAIRED if m in run.methods] or list(run.methods[:2])
if len(pair) == 2:
    points = [(q.id, q.query, q.ranks[pair[0]], q.ranks[pair[1]]) for q in run.queries]
    fig = rank_scatter_figure(
        points, x_method=pair[0], y_method=pair[1], depth=run.depth,
        selected=st.session_state[K.QUERY_ID],
    )  # fmt: skip
    right.plotly_chart(
        fig, key=K.SCATTER, selection_mode="points", config=NO_BAR,
        on_select=lambda: ins.on_select(K.SCATTER, K.QUERY_ID),
    )  # fmt: skip
st.markdown("**Deltas between methods** (paired bootstrap, 95%)")
pairs = [p for p, by_name in run.deltas.items() if any(d is not None for d in by_name.values())]
if pairs:  # one pair at a time, late against naive first, each table whole
    ahead = default_pair(run, pairs) or "-".join(reversed(registry.PAIRED))
    first = next((i for i, p in enumerate(pairs) if p == ahead), 0)  # yours vs our best
    compared = st.selectbox("Methods compared", pairs, index=first, key=K.DELTA_PAIR)
    delta_rows = eval_form.delta_table(run, compared)
    st.dataframe(delta_rows, hide_index=True, height=wording.table_height(len(delta_rows)))
    st.caption(
        "“clear” needs the interval off zero and 30 or more queries; with fewer, a "
        "bootstrap interval is too narrow, and the table says how many more queries would "
        "show a difference of the size seen (80% power)."
    )
if st.session_state[K.QUERY_ID] in {q.id for q in run.queries}:
    st.subheader("Query opened from the chart")
    triage.query_card(run, run.query(st.session_state[K.QUERY_ID]), docs, place="chart")

st.subheader("Failure reader")
cells = st.columns([2, 1, 3], vertical_alignment="bottom")
failing = list(run.methods)
n_failed = {m: sum(q.failed[m] for q in run.queries) for m in failing}
if st.session_state[K.TRIAGE_METHOD] not in failing:  # one with failures, late's first
    first_read = default_method(run)
    st.session_state[K.TRIAGE_METHOD] = min(
        failing, key=lambda m: (not n_failed[m], m != first_read)
    )
method = cells[0].selectbox(
    "Failures of", failing, key=K.TRIAGE_METHOD, on_change=triage.reset_triage,
    format_func=lambda m: f"{m} ({n_failed[m]} failed)",
)  # fmt: skip
seed = int(cells[1].number_input("Seed", 0, 9999, key=K.TRIAGE_SEED, on_change=triage.reset_triage))
tag_store = triage.triage_store()
if not any(q.failed[method] for q in run.queries):
    st.success(f"No failures under {method}: every query has gold in its top {run.text_k}.")
    st.stop()
triage.failure_table(run, docs)
sample = sample_failures(run, method, n=triage.N_SAMPLE, seed=seed, store=tag_store)
pos = triage.position(sample)
done = sum(triage.own_tag(f) is not None for f in sample)  # tags of this method's reading
cells[2].progress(done / len(sample), text=f"{done} of {len(sample)} read")
failure = sample[pos]
st.markdown(
    f"**Failure {pos + 1} of {len(sample)}** · gold not in the top {run.text_k} of {method}"
)
triage.query_card(run, run.query(failure.query_id), docs)
diagnosis = why.diagnosis_of(run, failure.query_id, method, docs)
why.why_panel(
    diagnosis, docs.get(failure.doc_id), run.query(failure.query_id).suggested.get(method)
)
suggested = diagnosis.suggested if diagnosis and diagnosis.suggested in CAUSES else ""
note_key = failure_note_key(run.run_id, failure.query_id, method)
st.session_state.setdefault(note_key, own.note if (own := triage.own_tag(failure)) else "")
if editing:
    st.text_input("Note (saved with the tag)", key=note_key)
size = len(sample)
buttons = st.columns(len(CAUSES) + 2)
buttons[0].button("Prev", shortcut="Left", on_click=triage.step, args=(-1, size))
for i, cause in enumerate(CAUSES if editing else (), start=1):
    chosen = triage.chosen_cause(failure, suggested) == cause  # exactly one, or none
    hint = " (the suggested cause)" if cause == suggested else ""
    buttons[i].button(
        cause, key=tag_widget(cause), help=CAUSE_HELP[cause] + hint, shortcut=str(i),
        type="primary" if chosen else "secondary", on_click=triage.tag_failure,
        args=(run, failure, cause, note_key, size, suggested),
    )  # fmt: skip
buttons[-1].button("Next", shortcut="Right", on_click=triage.step, args=(1, size))
tagged = (f"Tagged **{own.cause}**. " if own else "Not tagged yet. ") + triage.elsewhere_line(
    failure, tag_store.tags(run.run_id)
)
offered, agreed = agreement(tag_store, run.run_id)
agreed_line = f" The suggestion agreed with {agreed} of {offered} tags." if offered else ""
keys = (
    "Keys: "
    + (f"1-{len(CAUSES)} tag it (and move on), " if editing else "")
    + "← previous, → next."
)
st.caption(tagged + keys + agreed_line)
why.rank_panel(run, run.query(failure.query_id), docs)

chart, files = st.columns([3, 2], gap="medium")
counts = triage.sample_counts(sample)  # of this method's sample, not the run's every tag
chart.plotly_chart(cause_bar_figure(counts, n_sampled=size), config=NO_BAR)
with files:
    st.markdown("**Export the tagged set**")
    st.caption("JSONL lines are query-set lines again: the regression set of the next run.")
    stem = f"triage-{run.run_id}"
    for suffix, mime in ((".jsonl", "application/jsonl"), (".csv", "text/csv")):
        st.download_button(
            f"Download {suffix[1:].upper()}", triage.export_bytes(run, suffix), stem + suffix, mime,
            icon=":material/download:", key=tagged_export_widget(suffix),
        )  # fmt: skip
