"""Labelled query sets and the runs saved beside the index, read by Evaluate, Tune, Map and
the imports.

- ``init_state``: the Evaluate page's session-state keys (``workbench.state.EvalKey``) at
  their defaults, once (Tune shares its query-set keys);
- query sources: the demo datasheets' questions (from their generator), the shared
  chunking_evaluation set (``core.evaluate.import_chunking_eval``), an uploaded JSONL;
- ``run_evaluation``: ``core.evaluate.run_eval`` with a progress bar, saved as JSON in
  ``runs/`` beside the index, so a restart finds it again; ``saved_runs`` reads them.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from pathlib import Path

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core import settings
from core.chunk.policy_registry import policy_from_dict
from core.errors import ChunkscopeError, LabelError
from core.evaluate import (
    DocumentIndex,
    EvalConfig,
    EvalRun,
    Evidence,
    LabelledQuery,
    import_chunking_eval,
    load_run,
    parse_queries,
    run_eval,
)
from core.evaluate.cost import progress_line
from core.evaluate.imported_run import pending_methods, pending_state
from core.evaluate.run_store import keep_run, run_files, runs_folder
from core.provenance.types import Document
from workbench.documents import parse_cache, session
from workbench.documents.reads import read_document
from workbench.engine import resources as eng
from workbench.frame import roles
from workbench.state import EvalKey, Key
from workbench.widgets import full_depth, query_upload
from workbench.widgets.wording import md

EVAL_DIR = settings.EVAL_DIR.read() or (
    (settings.SHARED.read() or session.ROOT.parent / "shared") / "corpus/chunking_evaluation"
)


QUERY_SET_HELP = (
    'a query set is a .jsonl file, one JSON object a line: {"id", "query", "doc", and '
    '"gold" spans or "evidence" text} (what "Mark as the answer" and `chunkscope import-qa` '
    'write); a QA table (.csv, or .jsonl without a "query" field) is read after you map '
    "its question, evidence, document and page columns"
)


def init_state() -> None:
    eng.init_state()
    for key, default in (
        (EvalKey.RUN, None), (EvalKey.RUN_DOCS, {}), (EvalKey.QUERY_ID, None),
        (EvalKey.TRIAGE_METHOD, None), (EvalKey.TRIAGE_SEED, 0), (EvalKey.TRIAGE_POS, None),
    ):  # fmt: skip
        st.session_state.setdefault(key, default)


def demo_queries() -> list[LabelledQuery]:
    """Product x section questions of the demo set; evidence is each section's paragraph,
    taken from the generator of the datasheets (``sample_docs/make_datasheets.py``)."""
    path = session.SAMPLE_DIR / "make_datasheets.py"
    spec = importlib.util.spec_from_file_location("make_datasheets", path)
    assert spec is not None and spec.loader is not None  # a .py path always has a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [
        LabelledQuery(
            id=f"{module.slug(product)}-{module.slug(section)}",
            query=f"{product} {asked}",
            doc=f"datasheet-{module.slug(product)}",
            evidence=(Evidence(text=texts[section]),),
        )
        for product, texts in module.PRODUCTS.items()
        for section, asked in module.SECTION_QUERIES.items()
    ]


@st.cache_resource(show_spinner=False)
def shared_document(name: str) -> Document:
    return read_document(EVAL_DIR / "corpora" / f"{name}.md")


@st.cache_resource(show_spinner="Importing the shared labelled set…")
def shared_queries() -> list[LabelledQuery]:
    return import_chunking_eval(EVAL_DIR, loader=lambda path: shared_document(path.stem))


def unknown_policy(run: EvalRun) -> str:
    """The run's chunking policy when this session cannot chunk with it (an imported chunk
    set another store holds, a splitter not installed here), else ''."""
    try:
        policy_from_dict(dict(run.policy))
    except (ValueError, KeyError, TypeError, ChunkscopeError):
        return str(dict(run.policy).get("name", "?"))
    return ""


def documents_for(corpus: dict[str, str]) -> dict[str, Document]:
    """The documents a run was made on (by id and sha256) among those this app can load."""
    pool = {**session.library(), **eng.demo_documents()}
    for name in corpus:
        if name not in pool and (EVAL_DIR / "corpora" / f"{name}.md").is_file():
            pool[name] = shared_document(name)
    return {d: pool[d] for d, sha in corpus.items() if d in pool and pool[d].sha256 == sha}


def query_source(kind: str) -> tuple[list[LabelledQuery], list[Document]]:
    """The labelled queries and the documents they are ranked over, for one source."""
    if kind == "demo":
        return demo_queries(), list(eng.demo_documents().values())
    if kind == "marked":  # labelled in Compare with "Mark as the answer"
        queries = list(full_depth.marked())
        pool = {**eng.demo_documents(), **session.library()}
        return queries, [pool[d] for d in dict.fromkeys(q.doc for q in queries) if d in pool]
    if kind == "shared":
        names = sorted(p.stem for p in (EVAL_DIR / "corpora").glob("*.md"))
        cells = st.columns([3, 1])
        first = [n for n in names if n == "state_of_the_union"] or names[:1]  # the smallest
        picked = cells[0].multiselect("Corpora", names, default=first, key=EvalKey.CORPORA)
        limit = int(cells[1].number_input("First N per corpus", 1, 500, 20, key=EvalKey.LIMIT))
        kept: list[LabelledQuery] = []
        for name in picked:
            kept += [q for q in shared_queries() if q.doc == name][:limit]
        return kept, [shared_document(n) for n in picked]
    upload = st.file_uploader(  # no type= list: the browser would refuse by MIME type alone
        "Query set (JSONL, one query a line) or a QA table (CSV or JSONL)",
        key=EvalKey.UPLOAD, help=QUERY_SET_HELP,
    )  # fmt: skip
    if upload is None:
        return [], []
    if not upload.name.lower().endswith((".jsonl", ".csv")):
        raise LabelError(f"{upload.name} is not read here: {QUERY_SET_HELP}")
    if query_upload.is_qa_table(upload.name, upload.getvalue()):
        queries = query_upload.qa_queries(upload)
    else:
        queries = uploaded_queries(upload)
    index = DocumentIndex(list({**eng.demo_documents(), **session.library()}.values()))
    found = {d.doc_id: d for q in queries if (d := index.find(q.doc)) is not None}
    missing = sorted({q.doc for q in queries if index.find(q.doc) is None})
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5:,} more" if len(missing) > 5 else ""
        )
        st.caption(
            f"Not in the library, so their queries have no document: {md(shown)}. "
            "Upload those documents on the Library page (a name matches a document id "
            "or a file name, with or without its extension)."
        )
    return queries, list(found.values())


def uploaded_queries(upload: UploadedFile) -> list[LabelledQuery]:
    """The labelled queries of an uploaded JSONL query set (``LabelError``: one line)."""
    try:
        lines = upload.getvalue().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise LabelError(f"{upload.name} is not UTF-8 text: save it as UTF-8 JSONL") from exc
    return parse_queries(lines, source=upload.name)


def run_evaluation(
    queries: Sequence[LabelledQuery], docs: Sequence[Document], config: EvalConfig
) -> EvalRun | None:
    """Run with a progress bar of real counts and the time left over every (method, chunk)
    vector; save it beside the index (an editor's write: None, with the one-line refusal,
    for a viewer)."""
    if not roles.require_editor("run evaluations"):
        return None
    bar = st.progress(0.0, text="Chunking…")
    started = time.perf_counter()

    def tick(done: int, total: int) -> None:
        line = progress_line(done, total, time.perf_counter() - started, "Embedding")
        bar.progress(done / total if total else 1.0, text=line)

    run = run_eval(
        queries, docs, config, encoder=eng.encoder(), cache=eng.vector_cache(), progress=tick,
        chunker=lambda doc: parse_cache.chunked(doc, "fast", config.policy),
    )  # fmt: skip
    bar.empty()
    st.toast(f"Saved the run: {run.n_queries} queries in {run.timings.get('total_s', 0):.1f} s")
    keep_run(run, runs_dir())
    st.session_state[EvalKey.RUN] = run.run_id
    st.session_state[EvalKey.RUN_DOCS][run.run_id] = {d.doc_id: d for d in docs}
    st.session_state[EvalKey.TRIAGE_POS] = None
    st.session_state[EvalKey.TRIAGE_METHOD] = None  # the reader picks a method with failures
    return run


def runs_dir() -> Path:
    """``runs/`` beside the index: in the store folder, or beside the default triage file
    (``core.evaluate.run_store.runs_folder``, where ``eval`` and ``import-run`` keep theirs)."""
    if st.session_state[Key.STORE_KIND] == "folder":
        return runs_folder(st.session_state[Key.STORE_ADDR])
    return runs_folder()


@st.cache_resource(max_entries=8, show_spinner=False)
def _load_run(path: str, mtime: float) -> EvalRun:
    return load_run(path)


def saved_runs() -> dict[str, EvalRun]:
    """Runs saved beside the index, newest first."""
    return {p.stem: _load_run(str(p), p.stat().st_mtime) for p in run_files(runs_dir())}


def start_on_run() -> None:
    """Called by ``app.py``: a session of a workbench started by ``chunkscope open`` (its
    ``CHUNKSCOPE_OPEN_RUN``) goes to Evaluate at ``?run=RUN_ID``, once."""
    run_id = settings.OPEN_RUN.read()
    if run_id and st.session_state.get(EvalKey.STARTED_ON) != run_id:
        st.session_state[EvalKey.STARTED_ON] = run_id
        st.switch_page("pages/evaluate.py", query_params={"run": run_id})


def open_linked_run(runs: dict[str, EvalRun]) -> None:
    """``?run=RUN_ID`` on Evaluate: that run picked and its failure reader on its first
    failure, once per link (the picker may move on after); a run the store's ``runs/`` does
    not hold is said so."""
    linked = st.query_params.get("run")
    if not linked or st.session_state.get(EvalKey.LINKED_RUN) == linked:
        return
    if linked not in runs:
        st.warning(f"The link's run {md(linked)} is not in this store's runs ({runs_dir()}).")
        return
    st.session_state[EvalKey.LINKED_RUN] = linked
    st.session_state[EvalKey.RUN] = linked
    st.session_state[EvalKey.QUERY_ID] = None
    st.session_state[EvalKey.TRIAGE_POS] = None  # the first untagged failure
    st.session_state[EvalKey.TRIAGE_METHOD] = None  # the reader picks a method with failures


def run_label(run: EvalRun) -> str:
    """When, policy, methods and queries; an imported run's pending methods named apart
    (``being added`` or ``not added``), never as if the run held them."""
    when = run.created_at.replace("T", " ")[:16]
    pending = ", ".join(pending_methods(run))
    said = "not added" if pending_state(run) == "stopped" else "being added"
    later = f" ({pending} {said})" if pending else ""
    return (
        f"{when} · {run.policy_label} · {', '.join(run.methods)}{later} · {run.n_queries} queries"
    )
