"""Glue of the Evaluate page's "Run an evaluation" form (an editor's): the labelled
queries, the policy, methods (the first-look ones by default), k and scope, and what the
run will cost before it starts; a run is saved with the page's runs, its progress bar
showing the real counts and the time left. Also the page's metric and delta tables: one
column per method (the query count once per row), and how sure each delta is."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core import defaults
from core.embed import VectorCache
from core.errors import ChunkscopeError
from core.evaluate import EvalConfig, EvalRun
from core.evaluate.bootstrap import verdict
from core.evaluate.cost import EvalCost, estimate_cost
from core.provenance.types import Document
from workbench.documents import parse_cache
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.evaluate import why
from workbench.state import EvalKey
from workbench.widgets import controls
from workbench.widgets import full_depth as dep
from workbench.widgets import method_picker as meth
from workbench.widgets.wording import md

K = EvalKey
SOURCE_NAMES = {"demo": "the demo set", "shared": "the shared set", "marked": "your marked queries",
                "upload": "your query set"}  # fmt: skip
K_CHOICES = sorted({1, 3, 5, 10, 20, *defaults.KS})  # the cut-offs offered; the defaults picked


def evaluation_form() -> dict[str, EvalRun] | None:
    """Draw the form; the saved runs after a run, else None."""
    sources = {"demo": "Demo datasheets (35 questions)"}
    if run_files.EVAL_DIR.is_dir():
        sources["shared"] = "Shared set (chunking_evaluation)"
    if dep.marked():
        sources["marked"] = f"Marked in Compare ({len(dep.marked())})"
    sources["upload"] = "Upload a query set"
    source = st.segmented_control(
        "Labelled queries", list(sources), format_func=lambda s: sources[s], default="demo",
        key=K.SOURCE, required=True,
    )  # fmt: skip
    try:
        queries, docs = run_files.query_source(source)
    except ChunkscopeError as exc:
        st.error(md(exc), icon=":material/error:")
        queries, docs = [], []
    policy = controls.policy_controls("eval", horizontal=True)
    cells = st.columns([3, 2, 2])
    offered = meth.offered_methods()
    st.session_state.setdefault(K.METHODS, [m for m in defaults.METHODS if m in offered])
    st.session_state[K.METHODS] = [m for m in st.session_state[K.METHODS] if m in offered]
    methods = cells[0].multiselect("Methods", offered, key=K.METHODS)
    meth.fusion_builder(K.METHODS)
    ks = cells[1].multiselect("k", K_CHOICES, list(defaults.KS), key=K.KS)
    scope = cells[2].radio(
        "Rank over", ("corpus", "doc"), key=K.SCOPE, horizontal=True,
        format_func={"corpus": "all documents", "doc": "its own document"}.get,
    )  # fmt: skip
    ready = bool(queries and docs and methods and ks)
    config = None
    try:
        config = EvalConfig(policy=policy, methods=tuple(methods), ks=tuple(ks), scope=scope)
    except (ChunkscopeError, ValueError) as exc:
        if ready:
            st.error(md(exc), icon=":material/error:")
        ready = False
    cost = cost_of(docs, config) if ready and config is not None else None
    st.caption(f"Labelled queries: {len(queries)} · documents: {len(docs)}")
    if cost is not None:
        st.caption(f"Expected cost: {cost.sentence()}")
    if st.button("Run", type="primary", disabled=not ready) and config is not None:
        try:
            run = run_files.run_evaluation(queries, docs, config)
            if run is not None:  # each failure's suggestion and experiments, as eval --out
                why.store_suggestions(run, {d.doc_id: d for d in docs})
            return run_files.saved_runs()
        except ChunkscopeError as exc:
            st.error(md(exc), icon=":material/error:")
        return None
    return None


def _cache() -> VectorCache:
    return eng.vector_cache()


@st.cache_resource(max_entries=16, ttl=600, show_spinner="Counting what is left to embed…")
def _cost(
    shas: tuple[str, ...],
    config_key: str,
    cached: int,
    _docs: Sequence[Document],
    _config: EvalConfig,
) -> EvalCost:
    return estimate_cost(
        _docs, _config, encoder=eng.encoder(), cache=_cache(),
        chunker=lambda doc: parse_cache.chunked(doc, "fast", _config.policy, quiet=True),
    )  # fmt: skip


def cost_of(docs: list[Document], config: EvalConfig) -> EvalCost | None:
    """What running ``config`` over ``docs`` will embed and about how long it takes
    (None, with nothing shown, when it cannot be counted)."""
    key = f"{config.policy.key}|{','.join(config.methods)}"
    try:
        return _cost(tuple(d.sha256 for d in docs), key, len(_cache()), docs, config)
    except ChunkscopeError:
        return None


def no_run_line(editing: bool) -> str:
    """What the page says before any run: it names the query set picked above."""
    if not editing:
        return "No run yet: an editor runs evaluations here."
    source = st.session_state.get(K.SOURCE) or "demo"
    if source == "demo":
        return "No run yet: run the demo set above (about a minute on a laptop CPU)."
    return f"No run yet: run {SOURCE_NAMES.get(source, 'your query set')} above."


def metric_table(run: EvalRun) -> list[dict[str, object]]:
    """One row per metric, one column per method, the query count once (``12`` or, when
    the methods differ, ``12/10``): as many columns as methods plus two, so every method
    stays in view without a horizontal scroll."""
    rows = []
    for name in run.metrics[run.methods[0]]:
        row: dict[str, object] = {"metric": name}
        for m in run.methods:
            value = run.metrics[m].get(name)
            row[m] = None if value is None else round(float(value), 3)
        counts = sorted({int(run.n[m].get(name, 0)) for m in run.methods})
        row["n"] = "/".join(str(c) for c in counts)
        rows.append(row)
    return rows


def unscored_note(run: EvalRun) -> str | None:
    """What an empty cell of ``metric_table`` means, per method with one: an imported
    retriever's log holds fewer hits than the metric reads (its depth), so the metric is
    not computed for it; ``None`` when every cell holds a number."""
    lines = []
    for m in run.methods:
        empty = [name for name, value in run.metrics[m].items() if value is None]
        if not empty:
            continue
        depth = run.imported.get("depth") if m == run.imported.get("method") else None
        why = f"past its log's depth of {depth}" if depth is not None else "not computed for it"
        lines.append(f"{md(m)}: {', '.join(empty)} ({why})")
    if not lines:
        return None
    return "Empty cells (None) are metrics a method has no ranks for: " + "; ".join(lines) + "."


def delta_table(run: EvalRun, pair: str) -> list[dict[str, object]]:
    """One pair's deltas with their interval and how sure each is
    (``core.evaluate.bootstrap.verdict``: "clear" needs the interval off zero *and* 30+
    queries; fewer say how many more would show a difference of that size)."""
    return [
        {"metric": name, "Δ": round(d.delta, 3), "95% interval": f"[{d.low:+.3f}, {d.high:+.3f}]",
         "n": d.n, "how sure": verdict(d)}
        for name, d in run.deltas.get(pair, {}).items()
        if d is not None
    ]  # fmt: skip
