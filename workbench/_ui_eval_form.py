"""Glue of the Evaluate page's "Run an evaluation" form (an editor's): the labelled
queries, the policy, methods, k and scope; a run is saved with the page's runs."""

from __future__ import annotations

import streamlit as st

from core.errors import ChunkscopeError
from core.evaluate import EvalConfig
from workbench import _ui, _ui_controls
from workbench import _ui_depth as dep
from workbench import _ui_engine as eng
from workbench import _ui_methods as meth
from workbench import _ui_triage as tri

K = tri.TKey


def evaluation_form() -> dict | None:
    """Draw the form; the saved runs after a run, else None."""
    sources = {"demo": "Demo datasheets (35 questions)"}
    if tri.EVAL_DIR.is_dir():
        sources["shared"] = "Shared set (chunking_evaluation)"
    if dep.marked():
        sources["marked"] = f"Marked in Compare ({len(dep.marked())})"
    sources["upload"] = "Upload JSONL"
    source = st.segmented_control(
        "Labelled queries", list(sources), format_func=sources.get, default="demo",
        key=K.SOURCE, required=True,
    )  # fmt: skip
    try:
        queries, docs = tri.query_source(source)
    except ChunkscopeError as exc:
        st.error(_ui.md(exc), icon=":material/error:")
        queries, docs = [], []
    policy = _ui_controls.policy_controls("eval", horizontal=True, first=eng.DEMO_POLICY.name)
    cells = st.columns([3, 2, 2])
    offered = meth.offered_methods()
    st.session_state.setdefault(K.METHODS, eng.usable_methods())
    st.session_state[K.METHODS] = [m for m in st.session_state[K.METHODS] if m in offered]
    methods = cells[0].multiselect("Methods", offered, key=K.METHODS)
    meth.fusion_builder(K.METHODS)
    ks = cells[1].multiselect("k", [1, 3, 5, 10, 20], [1, 5, 10], key=K.KS)
    scope = cells[2].radio(
        "Rank over", ("corpus", "doc"), key=K.SCOPE, horizontal=True,
        format_func={"corpus": "all documents", "doc": "its own document"}.get,
    )  # fmt: skip
    st.caption(f"Labelled queries: {len(queries)} · documents: {len(docs)}")
    if st.button("Run", type="primary", disabled=not (queries and methods and ks)):
        try:
            config = EvalConfig(policy=policy, methods=tuple(methods), ks=tuple(ks), scope=scope)
            tri.run_evaluation(queries, docs, config)
            return tri.saved_runs()
        except ChunkscopeError as exc:
            st.error(_ui.md(exc), icon=":material/error:")
        return None
    return None
