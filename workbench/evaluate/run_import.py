"""Glue of "Import a run" on the Evaluate page: a retriever's log and its labels scored
over an imported chunk set (``core.evaluate.imported_run``), saved with the page's runs
so every view of a run (metrics, deltas, the failure reader, tags, exports) reads it; and
what an imported run could not place, shown above its numbers.

Your failures first, ours after: the run with the retriever alone is kept at once (its
failures readable in the reader), and our methods are computed in a background job
(``core.diagnose.import_job.AddMethods``, polled by ``workbench.engine.jobs``) that adds
them to the same run when done. Until then the run is the retriever's alone (the tables
and pickers offer no method it does not hold) and ``pending_panel`` says which methods
are being computed, with their progress; a run whose methods were never added (stopped
here, or an interrupted ``chunkscope import-run``) says so. The jobs are kept per process
(``live_jobs``), so another tab of the workbench sees the same progress."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core import defaults
from core.chunk import chunk_document
from core.diagnose.import_job import AddMethods
from core.diagnose.run_failures import suggest_run
from core.errors import ChunkscopeError
from core.evaluate import EvalRun
from core.evaluate.imported_run import (
    DEFAULT_NAME,
    LogImport,
    claims_pending,
    pending_methods,
    pending_state,
    with_pending,
)
from core.evaluate.run_store import keep_run
from core.evaluate.traces import TRACE_SHAPES, read_trace
from core.imported import ChunkSet
from core.provenance.types import Block, Chunk, ChunkPolicy, Document
from workbench.documents import chunk_sets, parse_cache, session
from workbench.engine import jobs, run_files
from workbench.engine import resources as eng
from workbench.evaluate import why
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
    """The run with the retriever alone, kept; our methods started in the background."""
    if not roles.require_editor("import runs"):  # it is saved beside the index
        return None
    found_shape, logged = read_trace(trace.getvalue(), trace.name, shape=shape)
    queries = run_files.uploaded_queries(labels)
    pool = session.library()
    docs = [pool[d] for d in chunk_set.docs if d in pool]
    found = LogImport(logged, queries, chunk_set, docs, name=name or DEFAULT_NAME,
                      shape=found_shape, trace_name=trace.name, parse=_parts)  # fmt: skip
    methods = found.ours(ours)
    encoder, folder = eng.encoder(), run_files.runs_dir()
    with st.spinner("Scoring the log and diagnosing its failures…"):
        first = found.run(encoder=encoder, cache=eng.vector_cache())
        if (busy := live_jobs().get(first.run_id)) is not None and busy.running:
            busy_with = (
                f"{', '.join(busy.methods)} are still being added to this run"
                if busy.methods
                else "this run is still being made again over its checked chunk set"
            )
            st.warning(f"{busy_with}.")
            return first
        first, diagnosed = suggest_run(with_pending(first, methods), found.docs,
                                       chunker=found.parts, encoder=encoder,
                                       embed=why.RANK_EMBED)  # fmt: skip
    keep_run(first, folder)
    why.keep_diagnoses(first, found.docs, diagnosed)  # the reader opens them as they are
    st.session_state[EvalKey.RUN_DOCS][first.run_id] = {d.doc_id: d for d in docs}
    claims = (
        chunk_sets.check_later(chunk_set, list(pool.values())) if claims_pending(first) else None
    )
    if methods or claims is not None:
        blocks = {d.doc_id: found.parts(d)[0] for d in found.docs.values()}  # parsed here

        def checked_parts(
            doc: Document, policy: ChunkPolicy
        ) -> tuple[Sequence[Block], Sequence[Chunk]]:
            return blocks[doc.doc_id], chunk_document(doc, blocks[doc.doc_id], policy)

        def remake(checked: ChunkSet) -> LogImport:  # in the job's thread: no session state
            return LogImport(logged, queries, checked, docs, name=found.name, shape=found_shape,
                             trace_name=trace.name, parse=checked_parts)  # fmt: skip

        job = AddMethods(found=found, first=first, methods=methods, encoder=encoder,
                         keep=lambda run: keep_run(run, folder), embed=why.RANK_EMBED,
                         cache=eng.vector_cache(), claims=claims, remake=remake)  # fmt: skip
        live_jobs()[first.run_id] = job
        job.start()
    return first


def _parts(doc: Document, policy: ChunkPolicy) -> tuple[Sequence[Block], Sequence[Chunk]]:
    """The blocks and chunks the other pages read, from the page's parse cache."""
    return parse_cache.parsed(doc, "fast").blocks, parse_cache.chunked(doc, "fast", policy)


@st.cache_resource(show_spinner=False)
def live_jobs() -> dict[str, AddMethods]:
    """The jobs adding our methods to an imported run, by run id, in this process."""
    return {}


def _forget(job: AddMethods) -> None:
    """An ended job, once its summary is shown: the run file says the rest."""
    if live_jobs().get(job.run_id) is job:
        del live_jobs()[job.run_id]


def pending_panel(run: EvalRun) -> None:
    """For an imported run whose methods are pending: their job's progress and a Stop
    button (then its summary once, and the page again with the grown run), or what
    became of them when no job of this workbench is adding them."""
    pending = pending_methods(run)
    job = live_jobs().get(run.run_id)
    if not pending:
        if claims_pending(run):
            _claims_pending(run, job)
        return
    names = ", ".join(pending)
    if job is not None and (job.running or not job.announced):
        jobs.job_panel(job, stop_label=f"Stop adding {names}", on_done=_forget)
        return
    alone = f"the run is **{md(run.imported.get('method', DEFAULT_NAME))}**'s alone"
    if pending_state(run) == "stopped":
        st.warning(
            f"{md(names)} were not added to this run: its import stopped before they were "
            f"computed, and {alone}. Import the run again to add them (it stays this run)."
        )
        return
    st.info(
        f"{md(names)}: being computed by the import that kept this run (`chunkscope "
        f"import-run`); until they are added, {alone}. Rerun the page (R) to see them; if "
        "that import no longer runs, import the run again."
    )


def _claims_pending(run: EvalRun, job: AddMethods | None) -> None:
    """A run scored over a set whose claims were pending: the job that makes it again once
    they are checked, or, with none running here, what the run is."""
    if job is not None and (job.running or not job.announced):
        jobs.job_panel(job, stop_label="Stop (keep this run as it is)", on_done=_forget)
        return
    set_name = md(str(run.imported.get("chunk_set", "")))
    st.warning(
        f"This run was scored while chunk set **{set_name}**'s offsets and pages were "
        "pending: its hits are placed by our text, not checked in your loader's text. "
        "Import the run again once the set's claims are checked (Library → Import chunks).",
        icon=":material/pending:",
    )


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
