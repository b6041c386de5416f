"""Map: the chunks of a scope in two dimensions, one panel per dense method, one
projection fitted on all of them, the query's top k ringed; click a chunk to open it.

Link: ``map?q=<query>&doc=<doc_id>&gold=<start>-<end>`` (``map_links.map_link``)."""

from __future__ import annotations

import streamlit as st

from core import methods as registry
from core.errors import ChunkscopeError
from core.projection import layout
from core.render.map_chart import MapMarks, map_figure
from workbench.engine import compare_model as model
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.frame import sidebar
from workbench.map import map_layout
from workbench.state import EngineKey, MapKey
from workbench.widgets import result_cards as ins
from workbench.widgets import wording
from workbench.widgets.wording import md

sidebar.entry("pages/map.py")
eng.init_state()
map_layout.init_state()
map_layout.take_link()
K, state = EngineKey, st.session_state
st.title("Map")
st.caption(
    "Each chunk of the scope as a point, one panel per dense method. One projection is "
    "fitted on every panel's vectors at once, so a chunk that sits elsewhere in another "
    "panel moved in the model's space. Late chunking pools a document's chunks from the "
    "same token states: its panel shows how much that pulls each document together."
)
entries = eng.indexed_here()[1]
if not entries:
    st.info("Nothing is indexed for this model yet: index documents on the Compare page.")
    st.stop()
eng.load_indexed_sources(entries)

row = st.columns([3, 3, 4, 1])
policy, _, doc_id = eng.pick_policy_and_scope(row[0], row[1], entries)
stored = model.stored_methods(entries, policy.key, doc_id)
dense = [m for m in registry.base_methods() if registry.get(m).family == "dense" and m in stored]
model.reconcile_methods(state, MapKey.METHODS, dense)
if not state[MapKey.METHODS]:  # first visit, or none of the chosen is indexed here
    state[MapKey.METHODS] = [m for m in registry.PAIRED if m in dense] or dense[:1]
methods = row[2].multiselect("Dense methods (one panel each)", dense, key=MapKey.METHODS)
state.setdefault(MapKey.K, min(int(state[K.K]), ins.MAX_CARDS))
k = int(row[3].number_input("k", 1, ins.MAX_CARDS, key=MapKey.K, help="Ringed per method."))
query = st.text_input(
    "Query", value=state[K.QUERY], placeholder="e.g. " + eng.DEMO_QUERY,
    **wording.synced(MapKey.QUERY_WIDGET, K.QUERY),
).strip()  # fmt: skip
if not methods:
    st.info("Pick at least one dense method indexed here.")
    st.stop()

try:
    cmp = eng.comparison(query, methods, policy, doc_id, entries, k) if query else None
    tops = {m: [h.chunk_id for h in cmp.results[m]] for m in methods} if cmp else {}
    gold = map_layout.linked_gold_ids(entries, policy, methods)
    keep = [*gold, *(c for ids in tops.values() for c in ids)]
    drawn = map_layout.scope(methods, policy, doc_id, entries, keep)
except ChunkscopeError as exc:
    st.error(md(exc), icon=":material/error:")
    st.stop()
qvec = eng.encoder().encode_query(query) if query else None

cells = st.columns([2, 3, 3])
kind = cells[0].radio("Layout", ["pca", "umap"], key=MapKey.KIND, horizontal=True,
                      format_func=str.upper)  # fmt: skip
colourings = dict(map_layout.COLOURINGS)
runs = run_files.saved_runs()
if not runs:
    colourings.pop("run")
if len({c.doc_id for c in drawn.chunks}) < 2:  # one document: its headings tell chunks apart
    colourings.pop("document")
if state[MapKey.COLOUR] not in colourings:
    state[MapKey.COLOUR] = next(iter(colourings))
colouring = cells[1].radio("Colour by", list(colourings), key=MapKey.COLOUR,
                           format_func=colourings.get, horizontal=True)  # fmt: skip
status = None
if colouring == "run":
    run_id = cells[2].selectbox("Run", list(runs), key=MapKey.RUN,
                                format_func=lambda r: run_files.run_label(runs[r]))  # fmt: skip
    run = runs[run_id]
    run_method = cells[2].selectbox("Failed under", list(run.methods), key=MapKey.RUN_METHOD)
    status = map_layout.run_status(drawn, run, run_method)

shown_kind, waiting = kind, ""
if kind == "umap":
    umap = map_layout.umap_state(drawn)
    if umap != "ready":
        shown_kind = "pca"
        waiting = "running" if umap == "running" else umap
try:
    lay = layout(drawn, shown_kind, query_vec=qvec)
except ChunkscopeError as exc:
    st.error(md(exc), icon=":material/error:")
    st.stop()
if waiting == "running":
    st.info(
        "UMAP is computing in the background: PCA is drawn meanwhile.",
        icon=":material/hourglass_top:",
    )
    map_layout.wait_for_umap(drawn)
elif waiting:
    st.warning(f"UMAP could not be drawn ({md(waiting)}): PCA is drawn instead.")

if drawn.sampled:
    st.info(f"Drawn: {md(drawn.sample_line())}.", icon=":material/filter_alt:")
labels = map_layout.groups(drawn, colouring, status)
ids = [c.chunk_id for c in drawn.chunks]
picked = state.get(MapKey.PICKED) if state.get(MapKey.PICKED) in drawn.row_of else None
marks = MapMarks(
    rings={m: [drawn.row_of[c] for c in tops.get(m, []) if c in drawn.row_of] for m in methods},
    gold=[drawn.row_of[c] for c in gold if c in drawn.row_of],
    selected=drawn.row_of.get(picked) if picked else None, query_xy=lay.query_xy,
)  # fmt: skip
title = f"{shown_kind.upper()} of {policy.key} chunks" + (f" · top {k} ringed" if query else "")
fig = map_figure(
    methods, lay.xy, ids=ids, groups=labels, hover=map_layout.hover_lines(drawn), marks=marks,
    title=title, colours=map_layout.STATUS if colouring == "run" else None,
)  # fmt: skip
st.plotly_chart(
    fig, key=MapKey.CHART, on_select=lambda: ins.on_select(MapKey.CHART, MapKey.PICKED),
    selection_mode="points", config={"displayModeBar": False},
)  # fmt: skip
fitted = "kept from before" if lay.reused else f"fitted in {lay.fit_s:.1f} s"
st.caption(
    f"Drawn: {md(drawn.sample_line())}. {md(lay.note)} (layout {fitted}). The star is "
    "the query, placed by the same projection; the panels share their axes, so a whole cloud "
    "shifted between panels is one method's vectors differing from the other's as a whole. "
    "Click a point to open its chunk below."
)

map_layout.cohesion_panel(
    drawn, "document" if "document" in colourings and colouring != "heading" else "heading"
)
if query and (picked or gold):
    map_layout.rank_panel(query, drawn, picked or gold[0], methods, policy, doc_id, k, bool(picked))
elif not query:
    st.caption("Type a query to see it as a star, its top k ringed and the cosines behind them.")
if picked:
    map_layout.picked_panel(drawn.chunks[drawn.row_of[picked]])
