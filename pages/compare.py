"""Compare: one query ranked side by side under naive, late and contextual vectors."""

from __future__ import annotations

import streamlit as st

from core.embed import METHODS
from core.errors import ChunkscopeError
from core.render.rank_charts import context_coverage_figure, cosine_rank_figure, slope_figure
from core.rerank import FEATURE_HELP, RerankWeights, contribution_rows, rerank
from pages import _ui
from pages import _ui_engine as eng

_ui.entry("pages/compare.py")
eng.init_state()
K = eng.EKey
st.title("Compare")
st.caption(
    "The same chunk spans embedded three ways: alone (naive), from the whole document "
    "(late) and with its title and headings prefixed (contextual). See where each ranks."
)
try:
    opened = eng.store()
    entries = eng.indexed(opened) if opened else []
except ChunkscopeError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()
eng.index_panel(entries)
if not entries:
    st.info("Nothing is indexed for this model yet: index the demo datasheets above.")
    st.stop()
eng.load_indexed_sources(entries)

policies = {e.policy_key: e.policy for e in entries}
if st.session_state[K.POLICY] not in policies:
    st.session_state[K.POLICY] = next(iter(policies))
row = st.columns([2, 3, 3, 1])
policy = policies[row[0].selectbox("Policy", list(policies), key=K.POLICY)]
here = [e for e in entries if e.policy_key == policy.key]
docs_here = sorted({e.doc_id for e in here})
if st.session_state[K.SCOPE] not in [eng.ALL, *docs_here]:
    st.session_state[K.SCOPE] = eng.ALL
scope = row[1].selectbox(
    "Scope", [eng.ALL, *docs_here], key=K.SCOPE,
    format_func=lambda d: f"Whole index ({len(docs_here)} documents)" if d == eng.ALL else d,
)  # fmt: skip
doc_id = None if scope == eng.ALL else scope
stored = [m for m in METHODS if any(e.method == m and doc_id in (None, e.doc_id) for e in here)]
chosen = row[2].multiselect("Methods", METHODS, key=K.METHODS)
k = int(row[3].number_input("k", 1, 50, key=K.K))
query = st.text_input("Query", key=K.QUERY, placeholder="e.g. " + eng.DEMO_QUERY)
refusal = eng.late_refusal()
methods = [m for m in chosen if m in stored and (m != "late" or refusal is None)]
missing = [m for m in chosen if m not in stored and (m != "late" or refusal is None)]
if missing:
    st.warning(
        f"Not indexed with policy {policy.key} here: {', '.join(missing)}. Index them above."
    )
if not query.strip() or not methods:
    st.info("Type a query and pick at least one indexed method.")
    st.stop()

with st.expander("Second stage: rerank a wider candidate set", icon=":material/tune:"):
    on = st.toggle("Rerank", key=K.RERANK)
    st.selectbox("Rerank the candidates of", methods, key=K.RERANK_METHOD)
    cells = st.columns(4)
    defaults = RerankWeights().as_dict()
    weights = RerankWeights(**{
        name: cells[i].number_input(name, -1.0, 2.0, value, 0.01, key=f"{K.WEIGHTS}_{name}",
                                    help=FEATURE_HELP[name])
        for i, (name, value) in enumerate(defaults.items())
    })  # fmt: skip
try:
    wide = eng.comparison(query.strip(), methods, policy, doc_id, entries)
except ChunkscopeError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()
stage = st.session_state[K.RERANK_METHOD] if on else None
reranked = None
if stage in wide.results:
    reranked = rerank(wide.results[stage], docs=_ui.library(), weights=weights, method=stage)
extra = {c.chunk_id for c in reranked.top(k)} if reranked else set()
view = eng.narrow(wide, k, extra)
changes = {c.chunk_id: c for c in view.rank_changes}
st.caption(
    f"{'Exact' if wide.exact else 'Approximate'} ranks over {max(wide.scope_sizes.values()):,} "
    f"chunks · answered in {wide.elapsed_s * 1000:.0f} ms (cached on repeat) · model {wide.model}"
)

names = [*chosen, *(["rerank"] if reranked else [])]
for col, name in zip(st.columns(len(names)), names, strict=True):
    with col:
        if name == "late" and refusal:
            st.subheader("late", divider="gray")
            st.info(f"Late chunking is disabled: {refusal}", icon=":material/block:")
        elif name == "rerank":
            eng.rerank_column(reranked, k)
        elif name in methods:
            eng.method_column(view, name, changes)
if reranked:
    with st.expander("Feature contributions of the reranked top k"):
        st.dataframe(contribution_rows(reranked, k), hide_index=True)

hits = {h.chunk_id: h for m in wide.methods for h in wide.results[m]}
ids = list(changes) + [c for c in extra if c not in changes]
labels = {c: eng.chunk_label(hits[c], doc_id is None) for c in ids}
if st.session_state[K.SELECTED] not in ids:
    movers = sorted(ids, key=lambda c: -abs(changes[c].delta or 0) if c in changes else 0)
    st.session_state[K.SELECTED] = movers[0]
left, right = st.columns(2)
with left:
    stages = [*wide.methods, *([f"{stage}+rerank"] if reranked else [])]
    if len(stages) > 1:
        lines = eng.slope_lines(wide, ids, reranked.ranks() if reranked else None, labels)
        fig = slope_figure(
            stages, lines, depth=max(3 * k, 20), selected=st.session_state[K.SELECTED]
        )
        st.plotly_chart(
            fig, key="cs_cmp_slope", on_select=lambda: eng.on_chart_select("cs_cmp_slope"),
            selection_mode="points", config={"displayModeBar": False},
        )  # fmt: skip
with right:
    pick = st.session_state[K.SELECTED]
    marks = [
        (m, changes[pick].ranks[m], changes[pick].cosines[m], labels[pick])
        for m in wide.methods
        if pick in changes and changes[pick].ranks[m] is not None
    ]
    curves = {m: [h.cosine for h in wide.results[m]] for m in wide.methods}
    st.plotly_chart(cosine_rank_figure(curves, k=k, marks=marks), config={"displayModeBar": False})

st.subheader("Inspect a chunk")
selected = st.selectbox("Chunk", ids, key=K.SELECTED, format_func=labels.get)
eng.chunk_inspector(wide, hits[selected], changes.get(selected), reranked)
ctx = eng.context_chunks(
    hits[selected].doc_id, policy.key, eng.index_state(entries), policy, opened
)
doc = _ui.library().get(hits[selected].doc_id)
if doc is not None and ctx:
    windows = eng.windows_of(doc) if refusal is None else []
    tokens = windows[-1].token_end if windows else _ui.doc_token_count(doc.doc_id, doc.sha256, doc)
    st.plotly_chart(
        context_coverage_figure(
            doc_label=doc.doc_id, doc_chars=len(doc.text), doc_tokens=tokens,
            window_tokens=eng.encoder().content_position_limit, windows=windows, chunks=ctx,
            selected=selected,
        ),
        config={"displayModeBar": False},
    )  # fmt: skip
