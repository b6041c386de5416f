"""Glue of the Compare and Evaluate pages: the engine as cached resources, jobs and state.

- ``EKey``: the session-state keys of these pages, initialised once by ``init_state``;
- ``encoder``/``vector_cache`` (``st.cache_resource``); the store is ``_ui.store()``;
- ``comparison``: one wide comparison per (query, scope, policy, methods, index state),
  cached, so a repeated query answers from memory; ``narrow`` cuts it to the top k;
- ``IndexJob``: indexing in a background thread, polled by a fragment with a progress bar
  and a cancel button (``core.index`` stops between batches when asked);
- documents: the demo datasheets, the shared labelled set, and documents an index names
  (loaded from their source files so their citations open in the Source view).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import streamlit as st

from core.chunk import DEFAULT_POLICIES
from core.cite import Citation
from core.embed import METHODS, VectorCache, load_encoder
from core.embed.late import check_late_pooling, late_windows
from core.embed.records import LateWindow
from core.errors import ChunkscopeError, PoolingError
from core.evaluate import (
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
from core.index import IndexProgress, IndexReport, index_documents
from core.ingest import load_document
from core.render.markup import Mark, Shape, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.rank_charts import WINDOW_COLOURS, ChunkContext, SlopeLine
from core.render.views import (
    context_window,
    first_words,
    focus_view,
    highlight_mark,
    highlight_shapes,
)
from core.retrieve import Comparison, compare
from core.types import ChunkPolicy, Document
from pages import _ui

DEMO_DIR = _ui.SAMPLE_DIR / "datasheets"
DEMO_QUERY = "Corvane HX40 operating temperature range"
EVAL_DIR = Path(
    os.environ.get("CHUNKSCOPE_EVAL_DIR", _ui.ROOT.parent / "shared/corpus/chunking_evaluation")
)
DEMO_POLICY = DEFAULT_POLICIES["structure"]  # one chunk per datasheet section
WIDE = 5000  # candidates kept per method: the cosine curve and the rerank stage use them
ALL = "__all__"
STYLE = """<style>
div.cs-hit { border-left: 3px solid #d5dde3; padding: .1rem 0 .1rem .55rem; margin: .2rem 0 0;
  font-size: .86rem; line-height: 1.35; }
div.cs-hit b.cs-rank { font-size: .95rem; margin-right: .4rem; }
span.cs-cos { color: #5b7083; margin-right: .4rem; }
span.cs-up { color: #2a9d55; font-weight: 700; } span.cs-down { color: #d1495b; font-weight: 700; }
div.cs-path { color: #33475b; font-weight: 600; } div.cs-words { color: #52606d; }
div.cs-hit.cs-gold { border-left-color: #ffb000; background: #fff8e1; }
div.cs-query { font-size: 1.15rem; font-weight: 600; padding: .4rem .7rem; border-radius: 6px;
  background: #eaf2f8; border: 1px solid #2e86ab; margin-bottom: .3rem; }
</style>"""


class EKey:
    """Session-state keys of the Compare and Evaluate pages."""

    SCOPE = "cs_cmp_scope"  # doc_id or ALL
    POLICY = "cs_cmp_policy"  # policy key present in the index
    METHODS = "cs_cmp_methods"
    QUERY = "cs_cmp_query"
    K = "cs_cmp_k"
    RERANK = "cs_cmp_rerank"  # second stage on/off
    RERANK_METHOD = "cs_cmp_rerank_method"
    SELECTED = "cs_cmp_selected"  # chunk_id inspected
    JOB = "cs_index_job"  # IndexJob | None
    INDEX_DOCS = "cs_index_docs"
    INDEX_METHODS = "cs_index_methods"
    WEIGHTS = "cs_cmp_weights"  # prefix of the rerank weight sliders
    RUN = "cs_eval_run"  # run_id shown on the Evaluate page
    RUN_DOCS = "cs_eval_docs"  # dict[run_id, dict[doc_id, Document]]
    QUERY_ID = "cs_eval_query"  # query opened from the scatter
    TRIAGE_METHOD = "cs_triage_method"
    TRIAGE_SEED = "cs_triage_seed"
    TRIAGE_POS = "cs_triage_pos"  # 0-based position in the sample
    EVAL_SOURCE = "cs_eval_source"  # demo | shared | upload
    EVAL_CORPORA = "cs_eval_corpora"
    EVAL_LIMIT = "cs_eval_limit"
    EVAL_UPLOAD = "cs_eval_upload"
    EVAL_METHODS = "cs_eval_methods"
    EVAL_KS = "cs_eval_ks"
    EVAL_SCOPE = "cs_eval_scope"


def init_state() -> None:
    for key, default in (
        (EKey.SCOPE, ALL),
        (EKey.POLICY, None),
        (EKey.METHODS, list(METHODS)),
        (EKey.QUERY, DEMO_QUERY),
        (EKey.K, 10),
        (EKey.RERANK, False),
        (EKey.RERANK_METHOD, "late"),
        (EKey.SELECTED, None),
        (EKey.JOB, None),
        (EKey.RUN, None),
        (EKey.RUN_DOCS, {}),
        (EKey.QUERY_ID, None),
        (EKey.TRIAGE_METHOD, None),
        (EKey.TRIAGE_SEED, 0),
        (EKey.TRIAGE_POS, 0),
    ):
        st.session_state.setdefault(key, default)
    st.html(STYLE)


# -- engine resources -------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the embedding model…")
def encoder():  # -> core.embed.Encoder
    return load_encoder()


@st.cache_resource(show_spinner=False)
def vector_cache() -> VectorCache:
    """Vectors by (model, method, document hash, span): indexing and evaluation share them."""
    return VectorCache()


def late_refusal() -> str | None:
    """Why late chunking is unavailable with this model (CLS pooling), or None."""
    try:
        check_late_pooling(encoder())
    except PoolingError as exc:
        return str(exc)
    return None


def usable_methods() -> list[str]:
    return [m for m in METHODS if m != "late" or late_refusal() is None]


def store(*, create: bool = False):  # -> core.store.ChunkStore | None
    """The sidebar's store; with ``create``, an embedded folder is made when missing."""
    opened = _ui.store()
    if opened is None and create:
        kind, address = st.session_state[_ui.Key.STORE_KIND], st.session_state[_ui.Key.STORE_ADDR]
        opened = _ui._open_store(kind, address.strip())
    return opened


def indexed(opened) -> list:  # -> list[core.store.IndexedDoc]
    """Complete document versions stored for this model."""
    name = encoder().name
    return [d for d in opened.indexed_documents() if d.complete and d.model == name]


def index_state(entries) -> str:
    """A token that changes whenever the index changes (cache key of comparisons)."""
    raw = "|".join(f"{d.collection}:{d.doc_id}:{d.sha256}:{d.updated_at}" for d in entries)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


@st.cache_resource(max_entries=32, show_spinner=False)
def _compare_cached(
    query: str, methods: tuple, policy_key: str, doc_id: str | None, where: str, state: str,
    _policy: ChunkPolicy, _store,
) -> Comparison:  # fmt: skip
    scope = max(_store.count(model=encoder().name, method=m, policy=_policy) for m in methods)
    depth = max(1, min(WIDE, scope))
    return compare(
        query, methods=methods, encoder=encoder(), store=_store, policy=_policy, k=depth,
        doc_id=doc_id,
    )  # fmt: skip


def comparison(query: str, methods, policy: ChunkPolicy, doc_id: str | None, entries):
    """The wide comparison (top ``WIDE`` per method), from memory when asked before."""
    opened = store()
    where = opened.location.describe()
    state = index_state(entries)
    return _compare_cached(query, tuple(methods), policy.key, doc_id, where, state, policy, opened)


def narrow(cmp: Comparison, k: int, extra: set[str] = frozenset()) -> Comparison:
    """The top ``k`` per method; rank changes of chunks in any top ``k`` (or in ``extra``)."""
    results = {m: hits[:k] for m, hits in cmp.results.items()}
    shown = {h.chunk_id for hits in results.values() for h in hits} | set(extra)
    changes = [c for c in cmp.rank_changes if c.chunk_id in shown]
    return replace(cmp, k=k, results=results, rank_changes=changes)


# -- documents --------------------------------------------------------------------------


@st.cache_resource(show_spinner="Reading the demo datasheets…")
def demo_documents() -> dict[str, Document]:
    return {d.doc_id: d for d in (load_document(p) for p in sorted(DEMO_DIR.glob("*.pdf")))}


@st.cache_resource(show_spinner=False)
def _load_file(path: str, mtime: float) -> Document:
    return load_document(path)


def register(docs) -> None:
    """Put documents in this session's library, so their citations open in Source."""
    held = st.session_state[_ui.Key.DOCS]
    for doc in docs:
        if _ui.library().get(doc.doc_id, doc).sha256 == doc.sha256:
            held.setdefault(doc.doc_id, doc)


def load_indexed_sources(entries) -> None:
    """Load documents named by the index from their source files (same bytes only)."""
    known = _ui.library()
    found = []
    for entry in entries:
        path = Path(entry.source)
        if entry.doc_id in known or not path.is_file():
            continue
        try:
            doc = _load_file(str(path.resolve()), path.stat().st_mtime)
        except ChunkscopeError:
            continue
        if doc.sha256 == entry.sha256 and doc.doc_id == entry.doc_id:
            found.append(doc)
    register(found)


def demo_queries() -> list[LabelledQuery]:
    """Product x section questions of the demo set; evidence is each section's paragraph."""
    spec = importlib.util.spec_from_file_location(
        "make_datasheets", _ui.SAMPLE_DIR / "make_datasheets.py"
    )
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


@st.cache_resource(show_spinner="Reading the shared corpora…")
def shared_documents(names: tuple[str, ...]) -> dict[str, Document]:
    return {n: load_document(EVAL_DIR / "corpora" / f"{n}.md") for n in names}


def triage_store() -> TriageStore:
    """Tags beside the index: ``<store folder>/triage.sqlite`` (server: the default path)."""
    return TriageStore(runs_dir().parent / "triage.sqlite")


def runs_dir() -> Path:
    if st.session_state[_ui.Key.STORE_KIND] == "folder":
        folder = Path(st.session_state[_ui.Key.STORE_ADDR].strip()).expanduser().resolve()
    else:
        folder = default_triage_path().parent
    return folder / "runs"


def documents_for(corpus: dict[str, str]) -> dict[str, Document]:
    """The documents a run was made on (by id and sha256) among those this app can load."""
    pool = {**_ui.library(), **demo_documents()}
    names = tuple(sorted(d for d in corpus if (EVAL_DIR / "corpora" / f"{d}.md").is_file()))
    if names:
        pool.update(shared_documents(names))
    return {d: pool[d] for d, sha in corpus.items() if d in pool and pool[d].sha256 == sha}


# -- indexing in the background ---------------------------------------------------------


@dataclass(slots=True)
class IndexJob:
    """One indexing run in a thread; the page polls ``latest`` and may set ``cancel``."""

    docs: list[Document]
    methods: tuple[str, ...]
    policy: ChunkPolicy
    cancel: threading.Event = field(default_factory=threading.Event)
    latest: IndexProgress | None = None
    report: IndexReport | None = None
    error: str | None = None
    started: float = field(default_factory=time.perf_counter)
    announced: bool = False
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def progress(self) -> tuple[float, str]:
        """Share done (0-1) and a line with the real counts."""
        e = self.latest
        if e is None:
            return 0.0, f"Starting: {len(self.docs)} document(s)…"
        part = e.done / e.total if e.total else 0.0
        step = self.methods.index(e.method) if e.method in self.methods else 0
        share = (e.doc_index + (step + part) / len(self.methods)) / max(e.n_docs, 1)
        unit = {"embed": "windows" if e.method == "late" else "chunks", "store": "chunks"}
        what = f"{e.stage} {e.method or ''} {e.done}/{e.total} {unit.get(e.stage, '')}"
        return min(share, 1.0), f"Document {e.doc_index + 1} of {e.n_docs} ({e.doc_id}): {what}"

    def run(self, opened, enc, cache) -> None:
        try:
            self.report = index_documents(
                self.docs, policy=self.policy, methods=self.methods, encoder=enc, store=opened,
                progress=self._note, should_cancel=self.cancel.is_set, cache=cache,
            )  # fmt: skip
        except ChunkscopeError as exc:
            self.error = str(exc)

    def _note(self, event: IndexProgress) -> None:
        self.latest = event


def start_index(docs: list[Document], policy: ChunkPolicy, methods: list[str]) -> None:
    opened = store(create=True)
    job = IndexJob(docs=docs, methods=tuple(methods), policy=policy)
    job.thread = threading.Thread(
        target=job.run, args=(opened, encoder(), vector_cache()), daemon=True
    )
    job.thread.start()
    st.session_state[EKey.JOB] = job
    register(docs)


def job_summary(job: IndexJob) -> tuple[str, str]:
    """(level, one line) about a finished job: success, warning or error."""
    if job.error or job.report is None:
        return "error", job.error or "indexing stopped without a report"
    report = job.report
    failed = [d for d in report.documents if d.error]
    done = sum(bool(d.indexed or d.skipped) and not d.error for d in report.documents)
    line = (
        f"{done} of {len(job.docs)} document(s) indexed ({', '.join(report.methods)}, "
        f"policy {report.policy.key}) in {report.elapsed_s:.1f} s"
    )
    if report.cancelled:
        return "warning", f"Cancelled: {line}. Start again to finish the rest."
    if failed:
        return "warning", line + "; " + "; ".join(f"{d.doc_id}: {d.error}" for d in failed)
    return "success", line


def job_panel() -> None:
    """Progress bar and cancel button of the indexing job; polls twice a second while it runs."""
    job: IndexJob | None = st.session_state[EKey.JOB]
    if job is not None:
        st.fragment(_job_body, run_every=0.5 if job.running else None)(job)


def _job_body(job: IndexJob) -> None:
    if job.running:
        share, line = job.progress()
        st.progress(share, text=line)
        st.button("Cancel indexing", icon=":material/cancel:", on_click=job.cancel.set)
        return
    level, line = job_summary(job)
    {"success": st.success, "warning": st.warning, "error": st.error}[level](line)
    if not job.announced:
        job.announced = True
        st.rerun()


# -- compare: controls, ranked columns, the inspected chunk -------------------------------


def index_panel(entries) -> None:
    """Pick documents, a policy and methods, and index them with a progress bar."""
    job = st.session_state[EKey.JOB]
    with st.expander("Index documents", expanded=not entries, icon=":material/database:"):
        pool = {**demo_documents(), **_ui.library()}
        st.multiselect(
            "Documents", list(pool), default=list(demo_documents()), key=EKey.INDEX_DOCS,
            help="The demo datasheets (five pumps, parallel sections) are picked to start with.",
        )  # fmt: skip
        policy = _ui.policy_controls("index", horizontal=True)
        st.multiselect(
            "Methods", usable_methods(), default=usable_methods(), key=EKey.INDEX_METHODS
        )
        if late_refusal():
            st.caption(f"Late is not offered: {late_refusal()}")
        picked, methods = st.session_state[EKey.INDEX_DOCS], st.session_state[EKey.INDEX_METHODS]
        busy = job is not None and job.running
        cells = st.columns([1, 3])
        if cells[0].button("Index", type="primary", disabled=busy or not picked or not methods):
            start_index([pool[d] for d in picked], policy, methods)
        demo = cells[1].button(
            f"Index the demo set ({DEMO_POLICY.key})", disabled=busy, icon=":material/bolt:",
            help="The five datasheets, one chunk per section, all methods.",
        )  # fmt: skip
        if demo:
            start_index(list(demo_documents().values()), DEMO_POLICY, usable_methods())
        job_panel()


def hit_card(hit, *, rank: int, note: str = "", extra: str = "") -> None:
    """One ranked chunk: rank, cosine, change, heading path, first words, citation link."""
    card(rank, hit.cosine, " › ".join(hit.heading_path), hit.text, note=note, extra=extra)
    _ui.citation_link(hit.citation)


def card(rank, cosine, path, text, *, note="", extra="", gold=False) -> None:
    shown = escape(path) if path else "<i>no heading</i>" if path is not None else ""
    st.html(
        f'<div class="cs-hit{" cs-gold" if gold else ""}"><b class="cs-rank">#{rank}</b>'
        f'<span class="cs-cos">cos {cosine:.3f}</span>{note}<div class="cs-path">{shown}</div>'
        f'<div class="cs-words">{escape(first_words(text, 18))}</div>{extra}</div>'
    )


def move_note(delta: int | None, against: str) -> str:
    """``▲3 vs naive`` (negative delta: moved up), escaped-safe HTML."""
    if delta is None:
        return f'<span class="cs-up">new vs {against}</span>'
    if delta == 0:
        return ""
    cls, arrow = ("cs-up", "▲") if delta < 0 else ("cs-down", "▼")
    return f'<span class="{cls}">{arrow}{abs(delta)} vs {escape(against)}</span>'


def method_column(view: Comparison, method: str, changes: dict) -> None:
    st.subheader(method, divider="gray")
    st.caption(f"{view.scope_sizes[method]:,} chunks searched")
    base = view.methods[0]
    for hit in view.results[method]:
        delta = changes[hit.chunk_id].deltas.get(method) if method != base else 0
        hit_card(hit, rank=hit.rank, note=move_note(delta, base))


def rerank_column(result, k: int) -> None:
    st.subheader(f"{result.method} + rerank", divider="violet")
    st.caption(f"{result.n_candidates:,} candidates reranked by visible features")
    for chunk in result.top(k):
        parts = " + ".join(f"{n} {v:+.3f}" for n, v in chunk.contributions.items() if v)
        extra = f'<div class="cs-words">{escape(parts)} = {chunk.score:.3f}</div>'
        note = move_note(chunk.rank_change, "first stage")
        hit_card(
            replace(chunk.hit, cosine=chunk.hit.cosine), rank=chunk.rank, note=note, extra=extra
        )


def chunk_label(hit, whole_index: bool) -> str:
    where = f"{hit.doc_id} · " if whole_index else ""
    return f"{where}{hit.heading_path[-1] if hit.heading_path else ''} · {first_words(hit.text, 8)}"


def slope_lines(wide: Comparison, ids, stages_extra: dict | None, labels: dict) -> list:
    by_id = {c.chunk_id: c for c in wide.rank_changes}
    lines = []
    for cid in ids:
        ranks = tuple(by_id[cid].ranks.get(m) if cid in by_id else None for m in wide.methods)
        if stages_extra is not None:
            ranks += (stages_extra.get(cid),)
        lines.append(SlopeLine(chunk_id=cid, label=labels[cid], ranks=ranks))
    return lines


def on_chart_select(chart_key: str) -> None:
    """Chart click -> the inspected chunk (points carry chunk ids as customdata)."""
    points = st.session_state[chart_key].selection.points
    if points and points[0].get("customdata"):
        data = points[0]["customdata"]
        st.session_state[EKey.SELECTED] = data[0] if isinstance(data, list) else data


@st.cache_data(max_entries=32, show_spinner=False)
def context_chunks(doc_id: str, policy_key: str, state: str, _policy, _store) -> list[ChunkContext]:
    """The document's chunks with their late context (``none`` when late is not stored)."""
    name = encoder().name
    late = _store.scope_records(model=name, method="late", policy=_policy, doc_id=doc_id)
    recs = late if late.ids else _store.scope_records(
        model=name, method="naive", policy=_policy, doc_id=doc_id
    )  # fmt: skip
    out = []
    for cid, meta, text in zip(recs.ids, recs.metadatas, recs.texts, strict=True):
        level = str(meta.get("context", "none")) if late.ids else "none"
        out.append(
            ChunkContext(
                chunk_id=cid, label=first_words(text, 8), char_start=int(meta["char_start"]),
                char_end=int(meta["char_end"]), level=level,
                token_count=int(meta.get("token_count", 0)),
                full_context_tokens=int(meta.get("full_context_tokens", 0)),
            )
        )  # fmt: skip
    return out


def window_shapes(doc: Document, windows, char_start: int, char_end: int, page: int) -> list:
    """The chunk's late windows shaded on ``page`` (what its tokens attended to), the chunk
    itself highlighted on top."""
    shapes = []
    for n, w in enumerate(windows):
        for line in span_line_boxes(doc, w.char_start, w.char_end, page=page):
            shapes.append(
                Shape(
                    bbox_pt=line.bbox_pt, fill=WINDOW_COLOURS[n % 2], fill_opacity=0.12,
                    title=f"late window {w.index + 1}: tokens {w.token_start}-{w.token_end}",
                    css_class="cs-window",
                )
            )  # fmt: skip
    return shapes + highlight_shapes(doc, char_start, char_end, page)


def window_marks(windows, char_start: int, char_end: int) -> list[Mark]:
    """Text marks: the windows' characters around the chunk, the chunk highlighted."""
    lo = min((w.char_start for w in windows), default=char_start)
    hi = max((w.char_end for w in windows), default=char_end)
    around = [(lo, char_start), (char_end, hi)]
    marks = [
        Mark(char_start=a, char_end=b, css_class="cs-window", colour=WINDOW_COLOURS[0])
        for a, b in around
        if b > a
    ]
    return sorted([*marks, highlight_mark(char_start, char_end)], key=lambda m: m.char_start)


@st.cache_resource(max_entries=16, show_spinner=False)
def _windows(doc_id: str, sha256: str, _doc: Document) -> list[LateWindow]:
    return late_windows(_doc, encoder())


def windows_of(doc: Document) -> list[LateWindow]:
    """The macro-windows late chunking ran over ``doc`` (default window policy)."""
    return _windows(doc.doc_id, doc.sha256, doc)


def chunk_inspector(wide: Comparison, hit, change, reranked) -> None:
    """The chunk on its page with its late windows shaded, and its score under each method."""
    late = next((h for h in wide.results.get("late", []) if h.chunk_id == hit.chunk_id), None)
    doc = _ui.library().get(hit.doc_id)
    left, right = st.columns([3, 2], gap="medium")
    with right:
        rows = [
            {"method": m, "rank": r, "cosine": None if c is None else round(c, 4)}
            for m, r, c in ((m, change.ranks[m], change.cosines[m]) for m in wide.methods)
        ] if change else []  # fmt: skip
        if reranked:
            found = next(c for c in reranked.chunks if c.chunk_id == hit.chunk_id)
            rows.append({"method": f"{reranked.method}+rerank", "rank": found.rank, "cosine": None})
        st.dataframe(rows, hide_index=True)
        _ui.citation_link(hit.citation)
        if late is not None:
            st.caption(
                f"Late: context {late.context}, {late.full_context_tokens} of {late.token_count} "
                f"tokens with full context, from window(s) {', '.join(str(w + 1) for w in late.windows)}"
            )
    with left:
        if doc is None:
            st.info(f"{hit.doc_id} is not loaded in this session: add it on the Library page.")
            return
        windows = [w for w in windows_of(doc) if late and w.index in late.windows]
        if doc.is_paged and hit.pages:
            shapes = window_shapes(doc, windows, hit.char_start, hit.char_end, hit.pages[0])
            _ui.show_html(_ui.page_figure(doc, hit.pages[0], shapes))
            st.caption(f"Page {hit.pages[0]}: the chunk in yellow; its late window(s) shaded.")
        else:
            a = max(0, hit.char_start - 800, min((w.char_start for w in windows), default=0))
            b = min(len(doc.text), hit.char_end + 800)
            _ui.show_html(
                marked_text_html(
                    doc.text[a:b], a, window_marks(windows, hit.char_start, hit.char_end)
                )
            )


# -- evaluate: query sets, runs, triage -------------------------------------------------


@st.cache_resource(show_spinner=False)
def shared_document(name: str) -> Document:
    return load_document(EVAL_DIR / "corpora" / f"{name}.md")


@st.cache_resource(show_spinner="Importing the shared labelled set…")
def shared_queries() -> list[LabelledQuery]:
    return import_chunking_eval(EVAL_DIR, loader=lambda path: shared_document(path.stem))


def query_source(kind: str) -> tuple[list[LabelledQuery], list[Document]]:
    """The labelled queries and the documents they are ranked over, for one source."""
    if kind == "demo":
        return demo_queries(), list(demo_documents().values())
    if kind == "shared":
        names = sorted(p.stem for p in (EVAL_DIR / "corpora").glob("*.md"))
        cells = st.columns([3, 1])
        picked = cells[0].multiselect("Corpora", names, default=names[-1:], key=EKey.EVAL_CORPORA)
        limit = int(cells[1].number_input("First N per corpus", 1, 500, 20, key=EKey.EVAL_LIMIT))
        queries = [q for q in shared_queries() if q.doc in picked]
        kept = [
            q for q in queries if sum(p.doc == q.doc for p in queries[: queries.index(q)]) < limit
        ]
        return kept, [shared_document(n) for n in picked]
    upload = st.file_uploader(
        "Query set (JSONL, one query a line)", ["jsonl"], key=EKey.EVAL_UPLOAD
    )
    if upload is None:
        return [], []
    queries = parse_queries(upload.getvalue().decode("utf-8").splitlines(), source=upload.name)
    index = DocumentIndex(list({**demo_documents(), **_ui.library()}.values()))
    found = {d.doc_id: d for q in queries if (d := index.find(q.doc)) is not None}
    return queries, list(found.values())


def run_evaluation(queries, docs, config: EvalConfig) -> EvalRun:
    """Run with a progress bar over every (method, chunk) vector; save it beside the index."""
    bar = st.progress(0.0, text="Chunking…")

    def tick(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Embedding: {done:,} of {total:,}")

    run = run_eval(
        queries, docs, config, encoder=encoder(), cache=vector_cache(), progress=tick,
        chunker=lambda doc: _ui.chunked(doc, "fast", config.policy),
    )  # fmt: skip
    bar.progress(1.0, text=f"{run.n_queries} queries in {run.timings.get('total_s', 0):.1f} s")
    save_run(run, runs_dir() / f"{run.run_id}.json")
    st.session_state[EKey.RUN] = run.run_id
    st.session_state[EKey.RUN_DOCS][run.run_id] = {d.doc_id: d for d in docs}
    st.session_state[EKey.TRIAGE_POS] = 0
    return run


@st.cache_resource(max_entries=8, show_spinner=False)
def _load_run(path: str, mtime: float) -> EvalRun:
    return load_run(path)


def saved_runs() -> dict[str, EvalRun]:
    """Runs saved beside the index, newest first."""
    files = sorted(runs_dir().glob("run-*.json"), key=lambda p: -p.stat().st_mtime)
    return {p.stem: _load_run(str(p), p.stat().st_mtime) for p in files}


def run_label(run: EvalRun) -> str:
    return (
        f"{run.created_at.replace('T', ' ')[:16]} · {run.policy.get('key', '')} · "
        f"{', '.join(run.methods)} · {run.n_queries} queries · {run.run_id}"
    )


def metric_rows(run: EvalRun) -> list[dict[str, object]]:
    """One row per metric: each method's mean and its query count."""
    names = list(run.metrics[run.methods[0]])
    rows = []
    for name in names:
        row: dict[str, object] = {"metric": name}
        for m in run.methods:
            value = run.metrics[m].get(name)
            row[m] = None if value is None else round(float(value), 3)
            row[f"{m} n"] = int(run.n[m].get(name, 0))
        rows.append(row)
    return rows


def delta_rows(run: EvalRun) -> list[dict[str, object]]:
    """Paired deltas with their bootstrap interval; "clear" when it excludes zero."""
    return [
        {
            "delta": pair, "metric": name, "Δ": round(d.delta, 3),
            "95% interval": f"[{d.low:+.3f}, {d.high:+.3f}]", "n": d.n,
            "clear": "yes" if d.excludes_zero else "no: could be noise",
        }
        for pair, by_name in run.deltas.items()
        for name, d in by_name.items()
        if d is not None
    ]  # fmt: skip


def tag_failure(run: EvalRun, failure, cause: str, note_key: str, size: int) -> None:
    """Button callback: tag, then move on to the next failure."""
    note = st.session_state.get(note_key, "")
    tag_query(triage_store(), run, failure.query_id, cause, note=note, method=failure.method)
    st.session_state[EKey.TRIAGE_POS] = min(st.session_state[EKey.TRIAGE_POS] + 1, size - 1)


def reset_triage() -> None:
    st.session_state[EKey.TRIAGE_POS] = 0


def on_query_select(chart_key: str) -> None:
    """Scatter click -> that query opens below the chart (points carry query ids)."""
    points = st.session_state[chart_key].selection.points
    if points:
        data = points[0].get("customdata")
        st.session_state[EKey.QUERY_ID] = data[0] if isinstance(data, list) else data


def step(by: int, size: int) -> None:
    st.session_state[EKey.TRIAGE_POS] = max(
        0, min(st.session_state[EKey.TRIAGE_POS] + by, size - 1)
    )


def export_bytes(run: EvalRun, suffix: str) -> bytes:
    """The run's tags exported by ``core.evaluate.export_tags`` (``.jsonl`` or ``.csv``)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"tags{suffix}"
        export_tags(triage_store(), run, path)
        return path.read_bytes()


def query_card(run: EvalRun, record, docs: dict[str, Document]) -> None:
    """A query: gold evidence on its page (or in its text), the top k of each method with
    gold-overlapping chunks marked, and where gold ranked when it missed the top k."""
    st.html(f'<div class="cs-query">{escape(record.query)}</div>')
    where = " · ".join(f"{m}: {rank_text(r, run.depth)}" for m, r in record.ranks.items())
    st.caption(f"{record.id} · document {record.doc_id} · first gold chunk: {where}")
    left, right = st.columns([2, 3], gap="medium")
    with left:
        gold_view(record, docs.get(record.doc_id))
    with right:
        for col, m in zip(st.columns(len(run.methods)), run.methods, strict=True):
            with col:
                st.markdown(f"**{m}** top {run.text_k}")
                for hit, cite in run.hits(record.id, m)[: run.text_k]:
                    gold = cite.doc_id == record.doc_id and any(
                        cite.char_start < g.char_end and g.char_start < cite.char_end
                        for g in record.gold
                    )
                    mark = '<span class="cs-up">gold</span>' if gold else ""
                    card(hit.rank, hit.cosine, None, cite.quote, note=mark, gold=gold)
                    _ui.citation_link(cite)
                rank = record.ranks[m]
                if rank is None or rank > run.text_k:
                    st.caption(f"Gold outside the top {run.text_k}: {rank_text(rank, run.depth)}")


def rank_text(rank: int | None, depth: int) -> str:
    return f"rank {rank}" if rank is not None else f"not in the top {depth}"


def gold_view(record, doc: Document | None) -> None:
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
        _ui.show_html(_ui.page_figure(doc, page, shapes, view_pt=view))
    else:
        a, b = context_window(doc, gold.char_start, gold.char_end, chars=300)
        mark = highlight_mark(gold.char_start, gold.char_end)
        _ui.show_html(marked_text_html(doc.text[a:b], a, [mark]))
    more = f" (+{len(record.gold) - 1} more gold spans)" if len(record.gold) > 1 else ""
    _ui.citation_link(cite, label=f"Gold: {cite.render()}{more}")
