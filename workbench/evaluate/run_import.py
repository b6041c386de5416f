"""Glue of "Import a run" on the Evaluate page: a retriever's log and its labels scored
over an imported chunk set (``core.evaluate.imported_run``), saved with the page's runs
so every view of a run (metrics, deltas, the failure reader, tags, exports) reads it; and
what an imported run could not place, shown above its numbers."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core import defaults
from core.errors import ChunkscopeError
from core.evaluate import EvalRun, save_run
from core.evaluate.imported_run import DEFAULT_NAME, import_run
from core.evaluate.traces import TRACE_SHAPES, read_trace
from core.imported import ChunkSet
from workbench.documents import chunk_sets, session
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.frame import roles
from workbench.state import EvalKey, RunImportKey
from workbench.widgets import wording
from workbench.widgets.wording import md


def import_form() -> None:
    """Upload the log and the labels, pick the chunk set and our methods; import."""
    sets = chunk_sets.offer()
    if not sets:
        st.info(
            "Import your chunks first (Library → Import chunks, or `chunkscope import-chunks`): "
            "a run's hits are read as chunks of an imported set."
        )
        return
    st.caption(
        "What your retriever returned per query: hits JSONL (`query_id`, `hits` with "
        "`chunk_id` or `text`), a Ragas dataset (`user_input`, `retrieved_contexts`) or "
        "OpenInference retriever spans (`retrieval.documents`), with the labelled queries."
    )
    with st.form(RunImportKey.FORM, border=False):
        left, right = st.columns(2)
        trace = left.file_uploader("Retrieval log (JSONL or JSON)", key=RunImportKey.TRACE)
        labels = right.file_uploader("Labelled queries (JSONL)", key=RunImportKey.LABELS)
        cells = st.columns([2, 1, 1, 3])
        chunk_set = cells[0].selectbox("Chunk set", list(sets), key=RunImportKey.CHUNK_SET)
        shape = cells[1].selectbox("Shape", [None, *TRACE_SHAPES], key=RunImportKey.SHAPE,
                                   format_func=lambda s: s or "sniff it")  # fmt: skip
        name = cells[2].text_input("Retriever", DEFAULT_NAME, key=RunImportKey.NAME)
        offered = eng.usable_methods()
        ours = cells[3].multiselect(
            "Our methods over the same spans", offered,
            default=[m for m in defaults.METHODS if m in offered], key=RunImportKey.METHODS,
        )  # fmt: skip
        if st.form_submit_button("Import the run", icon=":material/upload:"):
            if trace is None or labels is None:
                st.error("Give both the retrieval log and the labelled queries.")
                return
            try:
                run = _imported(trace, labels, sets[chunk_set], shape, name.strip(), ours)
            except ChunkscopeError as exc:
                st.error(md(exc), icon=":material/error:")
                return
            if run is None:  # a viewer's: refused
                return
            st.session_state[EvalKey.RUN] = run.run_id
            st.session_state[EvalKey.TRIAGE_POS] = None
            st.session_state[EvalKey.TRIAGE_METHOD] = None


def _imported(
    trace: UploadedFile,
    labels: UploadedFile,
    chunk_set: ChunkSet,
    shape: str | None,
    name: str,
    ours: list[str],
) -> EvalRun | None:
    if not roles.require_editor("import runs"):  # it is saved beside the index
        return None
    found, logged = read_trace(trace.getvalue(), trace.name, shape=shape)
    queries = run_files.uploaded_queries(labels)
    pool = session.library()
    docs = [pool[d] for d in chunk_set.docs if d in pool]
    bar = st.progress(0.0, text="Reading the log…")

    def tick(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Embedding: {done:,} of {total:,}")

    run = import_run(
        logged, queries, chunk_set, docs, encoder=eng.encoder(), name=name or DEFAULT_NAME,
        methods=tuple(ours), shape=found, trace_name=trace.name, cache=eng.vector_cache(),
        progress=tick,
    )  # fmt: skip
    bar.empty()
    save_run(run, run_files.runs_dir() / f"{run.run_id}.json")
    st.session_state[EvalKey.RUN_DOCS][run.run_id] = {d.doc_id: d for d in docs}
    return run


def imported_note(run: EvalRun) -> None:
    """For an imported run: where it came from, and every hit or query it could not place."""
    info = run.imported
    if not info:
        return
    # the record is read as Mapping[str, object]; import_run writes these two as lists of rows
    outside = list(info.get("outside", []))  # type: ignore[call-overload]
    unlabelled = list(info.get("unlabelled", []))  # type: ignore[call-overload]
    st.caption(
        f"**{md(info['method'])}** imported from {md(info['trace'])} "
        f"({info['shape']}) over chunk set **{md(info['chunk_set'])}**: "
        f"{info['labelled']} of {info['queries_in_trace']} logged queries labelled and scored, "
        f"{len(unlabelled)} without a label (kept, not scored); {len(outside)} of "
        f"{info['hits']} hits outside the set (each a miss at its rank); the log is "
        f"{info['depth']} deep, so a gold chunk ranked deeper reads as beyond its depth."
    )
    if outside or unlabelled:
        with st.expander(f"{len(outside)} hits outside the set · {len(unlabelled)} unlabelled"):
            if outside:
                st.dataframe(outside, hide_index=True, height=wording.table_height(len(outside)))
            if unlabelled:
                st.dataframe(unlabelled, hide_index=True,
                             height=wording.table_height(len(unlabelled)))  # fmt: skip
