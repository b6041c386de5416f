"""Compare: one query ranked side by side under every method the registry holds."""

from __future__ import annotations

import streamlit as st

from core import methods as registry
from core.errors import ChunkscopeError
from core.render import rank_charts as charts
from core.render.context_charts import context_coverage_figure
from core.retrieve.rerank import FEATURE_HELP, RerankWeights, contribution_rows
from workbench.compare import attribution as att
from workbench.documents import session
from workbench.engine import compare_model as model
from workbench.engine import resources as eng
from workbench.frame import roles, sidebar
from workbench.state import EngineKey, weight_widget
from workbench.widgets import full_depth as dep
from workbench.widgets import method_picker as meth
from workbench.widgets import result_cards as ins
from workbench.widgets import wording
from workbench.widgets.wording import md

sidebar.entry("pages/compare.py")
eng.init_state()
K = EngineKey
NO_BAR = {"displayModeBar": False}
st.title("Compare")
st.caption(
    "The same chunk spans ranked by each method and by fusions of them: "
    + "; ".join(f"{md(m)}, {md(registry.get(m).summary)}" for m in registry.base_methods())
    + ". See where each ranks."
)
opened, entries = eng.indexed_here()
if roles.editing_enabled():
    eng.index_panel(entries)
if not entries:
    if not roles.editing_enabled():
        st.info("Nothing is indexed for this model yet: an editor indexes documents here.")
    elif not eng.indexing():  # while a job runs, its progress bar says what is happening
        st.info("Nothing is indexed for this model yet: index the demo datasheets above.")
    st.stop()
assert opened is not None  # indexed_here finds entries only in an open store
eng.load_indexed_sources(entries)

state = st.session_state
row = st.columns([3, 3, 4, 1])
policy, docs_here, doc_id = eng.pick_policy_and_scope(row[0], row[1], entries)
whole = doc_id is None and len(docs_here) > 1  # cards name their document only among several
offered = meth.offered_methods()
model.reconcile_methods(state, K.METHODS, offered)
state[K.METHODS] = model.narrowed_default(
    state[K.METHODS],
    [m for m in eng.COMPARE_METHODS if m in offered],
    model.stored_methods(entries, policy.key, doc_id),
)
chosen = row[2].multiselect("Methods", offered, key=K.METHODS)
k_max = roles.k_limit(K.K)  # any k for an editor (see ins.MAX_CARDS); 50 for a viewer
k_help = ins.K_HELP if k_max is None else f"Chunks kept per method: up to {k_max} for a viewer."
k = int(row[3].number_input("k", 1, k_max, key=K.K, help=k_help))
k = min(k, k_max or k)  # a k sent by hand past the widget's limit
meth.fusion_builder(K.METHODS)
if model.demo_query_misfits(state[K.QUERY], eng.DEMO_QUERY, docs_here, eng.demo_documents()):
    state[K.QUERY] = ""
query = st.text_input(
    "Query",
    value=st.session_state[K.QUERY],
    placeholder="e.g. " + eng.DEMO_QUERY,
    **wording.synced(K.QUERY_WIDGET, K.QUERY),  # kept under our key across pages
).strip()
refusal = eng.late_refusal()
methods, missing = model.runnable(chosen, model.stored_methods(entries, policy.key, doc_id))
if missing:
    then = " Index them above." if roles.editing_enabled() else ""
    st.warning(f"Not indexed with {policy.key} here: {', '.join(missing)}.{then}")
if not query or not methods:
    st.info("Type a query and pick at least one indexed method.")
    st.stop()

model.reconcile_rerank(state, K.RERANK_METHOD, methods)
with st.expander("Second stage: rerank a wider candidate set", icon=":material/tune:"):
    on = st.toggle("Rerank", key=K.RERANK)
    stage = st.selectbox("Rerank the candidates of", methods, key=K.RERANK_METHOD)
    cells = st.columns(len(FEATURE_HELP))
    weights = RerankWeights(**{
        name: cells[i].number_input(
            name, -1.0, 2.0, value, 0.01, key=weight_widget(name), help=FEATURE_HELP[name]
        )
        for i, (name, value) in enumerate(RerankWeights().as_dict().items())
    })  # fmt: skip
cards_k = min(k, ins.MAX_CARDS)
try:
    wide = eng.comparison(query, methods, policy, doc_id, entries, cards_k)
except ChunkscopeError as exc:
    st.error(md(exc), icon=":material/error:")
    st.stop()
reranked = None
if on and stage in wide.results:
    reranked = model.reranked(wide, stage, k, docs=session.library(), weights=weights)
more = {c.chunk_id: c.hit for c in reranked.top(cards_k)} if reranked else {}
extra = set(more)
view = model.shown(wide, more)
changes = {c.chunk_id: c for c in view.rank_changes}
st.caption(
    f"{'Exact' if wide.exact else 'Approximate'} ranks over {max(wide.scope_sizes.values()):,} "
    f"chunks · answered in {wide.elapsed_s * 1000:.0f} ms (from memory on repeat) · "
    f"model {wide.model}"
)

if k > cards_k:
    st.info(ins.cards_capped_line(k), icon=":material/info:")
hits = {**more, **{h.chunk_id: h for m in wide.methods for h in wide.results[m]}}
titles = ins.titles_of([hits[c] for c in {*changes, *extra}], policy, entries)  # card titles
if refusal:
    st.info(f"Late chunking is disabled: {md(refusal)}", icon=":material/block:")
names = [*methods, *(["rerank"] if reranked else [])]
for col, name in zip(st.columns(len(names)), names, strict=True):
    with col:
        if name == "rerank" and reranked is not None:  # "rerank" is named only then
            ins.rerank_column(reranked, cards_k, whole, titles)
        elif name in methods:
            ins.method_column(view, name, changes, whole, titles)
if reranked:
    with st.expander("Feature contributions of the reranked top k"):
        st.dataframe(contribution_rows(reranked, k), hide_index=True)

offered_picks = model.picks(
    wide,
    changes,
    extra,
    lambda hit: ins.chunk_label(hit, whole, titles.get(hit.chunk_id)),
    more,
)
labels = offered_picks.labels
picked = model.reconcile_selected(state, K.SELECTED, offered_picks)
left, right = st.columns([3, 2])
stages = [*wide.methods, *([f"{stage}+rerank"] if reranked else [])]
if len(stages) > 1:
    ranks = model.slope_ranks(view, labels)
    lines = charts.slope_lines(
        wide.methods, ranks, labels, extra=reranked.ranks() if reranked else None
    )
    fig = charts.slope_figure(stages, lines, depth=max(3 * cards_k, 20), selected=picked)
    left.plotly_chart(
        fig, key=K.SLOPE_CHART, on_select=lambda: ins.on_select(K.SLOPE_CHART, K.SELECTED),
        selection_mode="points", config=NO_BAR,
    )  # fmt: skip
marks = model.score_marks(wide, changes.get(picked), labels[picked])
curves, scales = model.score_curves(wide)
fig = charts.score_rank_figure(curves, scales=scales, k=k, marks=marks)
right.plotly_chart(fig, config=NO_BAR)

st.subheader("Inspect a chunk")
selected = st.selectbox("Chunk", list(labels), key=K.SELECTED, format_func=lambda c: labels[c])
hit = hits[selected]
ins.chunk_inspector(wide, hit, changes.get(selected), reranked)
where = opened.location.describe()
ctx = eng.context_chunks(hit.doc_id, policy.key, where, eng.index_state(entries), policy, opened)
doc = session.library().get(hit.doc_id)
if doc is not None and doc.sha256 != hit.doc_sha256:
    st.caption(
        f"No context coverage: the loaded {md(doc.doc_id)} differs from the indexed "
        "version, so the stored offsets do not fit its text."
    )
elif doc is not None and ctx:
    windows = eng.windows_of(doc) if refusal is None else []
    tokens = (
        windows[-1].token_end if windows else session.doc_token_count(doc.doc_id, doc.sha256, doc)
    )
    window, limit = eng.late_window_tokens(tokens)
    fig = context_coverage_figure(
        doc_label=doc.doc_id, doc_chars=len(doc.text), doc_tokens=tokens, window_tokens=window,
        limit_tokens=limit, windows=windows, chunks=ctx, selected=selected,
    )  # fmt: skip
    st.plotly_chart(fig, config=NO_BAR)

att.attribution_panel(query, hit, policy, doc)
dep.depth_panel(query, wide, policy, doc_id, k, hit, opened)
