"""Glue of the Evaluate page: labelled query sets, runs saved beside the index, triage.

- ``init_state``: the page's session-state keys (``workbench.state.EvalKey``) at their
  defaults, once;
- query sources: the demo datasheets' questions (from their generator), the shared
  chunking_evaluation set (through ``core.evaluate.import_chunking_eval``), an uploaded JSONL;
- ``run_evaluation``: ``core.evaluate.run_eval`` with a progress bar, saved as JSON in
  ``runs/`` beside the index, so a restart finds it again;
- triage: tags in ``triage.sqlite`` beside the index (``core.evaluate.TriageStore``),
  button callbacks, exports, and the query card of the failure reader.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from pathlib import Path

import streamlit as st

from core.errors import LabelError
from core.evaluate import (
    CAUSES,
    DocumentIndex,
    EvalConfig,
    EvalRun,
    Evidence,
    LabelledQuery,
    TriageStore,
    default_triage_path,
    export_tags,
    import_chunking_eval,
    load_run,
    parse_queries,
    run_eval,
    save_run,
    tag_query,
)
from core.evaluate.cost import progress_line
from core.provenance.cite import Citation
from core.provenance.types import Document
from core.render.markup import escape, marked_text_html
from core.render.titles import stored_title
from core.render.views import context_window, focus_view, highlight_mark, highlight_shapes
from workbench import _ui, _ui_cite, _ui_parse, _ui_qa_upload, _ui_roles
from workbench import _ui_engine as eng
from workbench import _ui_inspect as ins
from workbench._ui_reads import read_document
from workbench.state import EvalKey, Key

EVAL_DIR = Path(
    os.environ.get("CHUNKSCOPE_EVAL_DIR", _ui.ROOT.parent / "shared/corpus/chunking_evaluation")
)
N_SAMPLE = 20  # failures drawn for the reader
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


# -- query sets and their documents -----------------------------------------------------


def demo_queries() -> list[LabelledQuery]:
    """Product x section questions of the demo set; evidence is each section's paragraph,
    taken from the generator of the datasheets (``sample_docs/make_datasheets.py``)."""
    path = _ui.SAMPLE_DIR / "make_datasheets.py"
    spec = importlib.util.spec_from_file_location("make_datasheets", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
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


def documents_for(corpus: dict[str, str]) -> dict[str, Document]:
    """The documents a run was made on (by id and sha256) among those this app can load."""
    pool = {**_ui.library(), **eng.demo_documents()}
    for name in corpus:
        if name not in pool and (EVAL_DIR / "corpora" / f"{name}.md").is_file():
            pool[name] = shared_document(name)
    return {d: pool[d] for d, sha in corpus.items() if d in pool and pool[d].sha256 == sha}


def query_source(kind: str) -> tuple[list[LabelledQuery], list[Document]]:
    """The labelled queries and the documents they are ranked over, for one source."""
    if kind == "demo":
        return demo_queries(), list(eng.demo_documents().values())
    if kind == "marked":  # labelled in Compare with "Mark as the answer"
        from workbench._ui_depth import marked

        queries = list(marked())
        pool = {**eng.demo_documents(), **_ui.library()}
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
    if _ui_qa_upload.is_qa_table(upload.name, upload.getvalue()):
        queries = _ui_qa_upload.qa_queries(upload)
    else:
        queries = uploaded_queries(upload)
    index = DocumentIndex(list({**eng.demo_documents(), **_ui.library()}.values()))
    found = {d.doc_id: d for q in queries if (d := index.find(q.doc)) is not None}
    missing = sorted({q.doc for q in queries if index.find(q.doc) is None})
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5:,} more" if len(missing) > 5 else ""
        )
        st.caption(
            f"Not in the library, so their queries have no document: {_ui.md(shown)}. "
            "Upload those documents on the Library page (a name matches a document id "
            "or a file name, with or without its extension)."
        )
    return queries, list(found.values())


def uploaded_queries(upload) -> list[LabelledQuery]:
    """The labelled queries of an uploaded JSONL query set (``LabelError``: one line)."""
    try:
        lines = upload.getvalue().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise LabelError(f"{upload.name} is not UTF-8 text: save it as UTF-8 JSONL") from exc
    return parse_queries(lines, source=upload.name)


def run_evaluation(queries, docs, config: EvalConfig) -> EvalRun | None:
    """Run with a progress bar of real counts and the time left over every (method, chunk)
    vector; save it beside the index (an editor's write: None, with the one-line refusal,
    for a viewer)."""
    if not _ui_roles.require_editor("run evaluations"):
        return None
    bar = st.progress(0.0, text="Chunking…")
    started = time.perf_counter()

    def tick(done: int, total: int) -> None:
        line = progress_line(done, total, time.perf_counter() - started, "Embedding")
        bar.progress(done / total if total else 1.0, text=line)

    run = run_eval(
        queries, docs, config, encoder=eng.encoder(), cache=eng.vector_cache(), progress=tick,
        chunker=lambda doc: _ui_parse.chunked(doc, "fast", config.policy),
    )  # fmt: skip
    bar.empty()
    st.toast(f"Saved the run: {run.n_queries} queries in {run.timings.get('total_s', 0):.1f} s")
    save_run(run, runs_dir() / f"{run.run_id}.json")
    st.session_state[EvalKey.RUN] = run.run_id
    st.session_state[EvalKey.RUN_DOCS][run.run_id] = {d.doc_id: d for d in docs}
    st.session_state[EvalKey.TRIAGE_POS] = None
    st.session_state[EvalKey.TRIAGE_METHOD] = None  # the reader picks a method with failures
    return run


def runs_dir() -> Path:
    """``runs/`` beside the index: in the store folder, or beside the default triage file."""
    if st.session_state[Key.STORE_KIND] == "folder":
        return Path(st.session_state[Key.STORE_ADDR].strip()).expanduser().resolve() / "runs"
    return default_triage_path().parent / "runs"


def triage_store() -> TriageStore:
    """Cause tags in ``triage.sqlite`` beside the index (restarts keep them); a viewer's
    reads the file without ever writing it."""
    if not _ui_roles.is_editor():
        return _ui_roles.ReadOnlyTriage(runs_dir().parent / "triage.sqlite")
    return TriageStore(runs_dir().parent / "triage.sqlite")


@st.cache_resource(max_entries=8, show_spinner=False)
def _load_run(path: str, mtime: float) -> EvalRun:
    return load_run(path)


def saved_runs() -> dict[str, EvalRun]:
    """Runs saved beside the index, newest first."""
    files = sorted(runs_dir().glob("run-*.json"), key=lambda p: -p.stat().st_mtime)
    return {p.stem: _load_run(str(p), p.stat().st_mtime) for p in files}


def run_label(run: EvalRun) -> str:
    when = run.created_at.replace("T", " ")[:16]
    return (
        f"{when} · {run.policy.get('key', '')} · {', '.join(run.methods)} · {run.n_queries} queries"
    )


def tag_failure(
    run: EvalRun, failure, cause: str, note_key: str, size: int, suggested: str = ""
) -> None:
    """Button callback: tag (with the note and the suggestion shown), then move on."""
    if not _ui_roles.require_editor("tag failures"):
        return
    note = st.session_state.get(note_key, "")
    tag_query(
        triage_store(), run, failure.query_id, cause, note=note, method=failure.method,
        suggested=suggested,
    )  # fmt: skip
    step(1, size)


def step(by: int, size: int) -> None:
    st.session_state[EvalKey.TRIAGE_POS] = max(
        0, min((st.session_state[EvalKey.TRIAGE_POS] or 0) + by, size - 1)
    )


def own_tag(failure):  # -> core.evaluate.Tag | None
    """The failure's tag if it was made under the method being read.

    A query has one tag per run (``TriageStore``), whichever method it was read under; a
    tag made while reading another method's failures is that method's reading, so it
    neither counts here nor selects a button here (tagging here replaces it)."""
    tag = failure.tag
    return tag if tag is not None and tag.method in ("", failure.method) else None


def sample_counts(sample) -> dict[str, int]:
    """Tags per cause among the failures of ``sample`` tagged under its own method,
    every cause present, in ``CAUSES`` order."""
    counts = dict.fromkeys(CAUSES, 0)
    for failure in sample:
        if (tag := own_tag(failure)) is not None:
            counts[tag.cause] += 1
    return counts


def chosen_cause(failure, suggested: str) -> str:
    """The one cause shown selected: this method's tag, else the suggestion ('' none)."""
    tag = own_tag(failure)
    return tag.cause if tag is not None else suggested


def elsewhere_line(failure) -> str:
    """What a tag made under another method says, and that tagging here replaces it."""
    tag = failure.tag
    if tag is None or own_tag(failure) is not None:
        return ""
    return (
        f"Tagged **{tag.cause}** while reading {_ui.md(tag.method)}'s failures; a tag "
        "here replaces it (one tag per query and run). "
    )


def reset_triage() -> None:
    """Open the sample again at its first untagged failure."""
    st.session_state[EvalKey.TRIAGE_POS] = None


def position(sample) -> int:
    """Where the reader stands in ``sample``; a new session starts at the first untagged."""
    if st.session_state[EvalKey.TRIAGE_POS] is None:
        first = next((i for i, f in enumerate(sample) if own_tag(f) is None), 0)
        st.session_state[EvalKey.TRIAGE_POS] = first
    return min(st.session_state[EvalKey.TRIAGE_POS], len(sample) - 1)


def export_bytes(run: EvalRun, suffix: str) -> bytes:
    """The run's tags as ``core.evaluate.export_tags`` writes them (``.jsonl`` or ``.csv``)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"tags{suffix}"
        export_tags(triage_store(), run, path)
        return path.read_bytes()


def rank_text(rank: int | None, depth: int, record=None, method: str = "") -> str:
    """``rank 912 of 84,000`` at full depth where the run recorded it, else the rank
    within the run's depth."""
    full = record.full_ranks.get(method) if record is not None else None
    if full is not None and record.scope_size:
        return f"rank {full:,} of {record.scope_size:,}"
    return f"rank {rank}" if rank is not None else f"not in the top {depth}"


def query_card(run: EvalRun, record, docs: dict[str, Document]) -> None:
    """A query: gold evidence on its page (or in its text), the top k of each method with
    gold-overlapping chunks marked, and where gold ranked when it missed the top k."""
    st.html(f'<div class="cs-query">{escape(record.query)}</div>')
    where = " · ".join(
        f"{m}: {rank_text(r, run.depth, record, m)}" for m, r in record.ranks.items()
    )
    st.caption(
        f"{_ui.md(record.id)} · document {_ui.md(record.doc_id)} · first gold chunk: {where}"
    )
    if len(run.methods) <= 3:  # the gold beside the methods' top k
        left, right = st.columns([2, 3], gap="medium")
    else:  # many methods: the gold above, the methods' columns the page's whole width
        left, right = st.container(), st.container()
    with left:
        gold_view(record, docs.get(record.doc_id))
    titles = ins.run_titles(run, docs)
    several = len(run.corpus) > 1  # a card names its document only among several
    for col, m in zip(right.columns(len(run.methods)), run.methods, strict=True):
        col.markdown(f"**{m}** top {run.text_k}")
        with col:
            for hit, cite in run.hits(record.id, m)[: run.text_k]:
                gold = cite.doc_id == record.doc_id and any(
                    cite.char_start < g.char_end and g.char_start < cite.char_end
                    for g in record.gold
                )
                mark = '<span class="cs-up">gold</span> ' if gold else ""
                shown = ins.score_text(m, hit.score)
                title = titles.get(hit.chunk_id) or stored_title((), cite.quote)
                ins.card(
                    hit.rank, shown, title.head or None, title, note=mark, gold=gold,
                    doc=cite.doc_id if several else "",
                )  # fmt: skip
                ins.short_link(cite)
        rank = record.ranks[m]
        if rank is None or rank > run.text_k:
            shown = rank_text(rank, run.depth, record, m)
            col.caption(f"Gold outside the top {run.text_k}: {shown}")


def gold_view(record, doc: Document | None) -> None:
    """The first gold span highlighted on its page, or in its text for reflowable documents."""
    gold = record.gold[0]
    if doc is None or doc.sha256 != record.doc_sha256:
        st.caption("The labelled document is not loaded here; the gold text as labelled:")
        st.html(f'<div class="cs-text">{escape(gold.text or "")}</div>')
        return
    cite = Citation.of_span(doc, gold.char_start, gold.char_end)
    if doc.is_paged and cite.pages:
        page = cite.pages[0]
        view = focus_view(doc, gold.char_start, gold.char_end, page)
        shapes = highlight_shapes(doc, gold.char_start, gold.char_end, page)
        _ui_cite.show_html(_ui_cite.page_figure(doc, page, shapes, view_pt=view))
    else:
        a, b = context_window(doc, gold.char_start, gold.char_end, chars=300)
        mark = highlight_mark(gold.char_start, gold.char_end)
        _ui_cite.show_html(marked_text_html(doc.text[a:b], a, [mark]))
    more = f" (+{len(record.gold) - 1} more gold spans)" if len(record.gold) > 1 else ""
    _ui_cite.citation_link(cite, label=f"Gold: {cite.render()}{more}")
