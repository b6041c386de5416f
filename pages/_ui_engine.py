"""Glue of the Compare and Evaluate pages: the engine as cached resources, jobs and state.

- ``EKey``: the session-state keys of these pages, initialised once by ``init_state``;
- ``encoder``/``vector_cache`` (``st.cache_resource``); the store is ``_ui.store()``;
- ``comparison``: one wide comparison (top ``WIDE`` per method) per query, scope, policy,
  methods and index state, cached, so a repeated query answers from memory;
- ``IndexJob``: indexing in a background thread, polled by a fragment with a progress bar
  and a cancel button (``core.index`` stops between batches when asked);
- documents: the demo datasheets and the documents an index names (loaded from their
  source files, so their citations open in the Source view);
- ranked-chunk cards and the inspected chunk with its late windows drawn.

The Evaluate page's own glue (query sets, runs, triage) is in ``_ui_triage``.
"""

from __future__ import annotations

import hashlib
import threading
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

import streamlit as st

from core.chunk import DEFAULT_POLICIES
from core.cite import Citation
from core.embed import METHODS, VectorCache, load_encoder
from core.embed.late import check_late_pooling, late_windows, window_policy
from core.embed.records import LateWindow
from core.errors import ChunkscopeError, PoolingError
from core.index import IndexProgress, IndexReport, index_documents
from core.ingest import load_document
from core.render.markup import Mark, Shape, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.rank_charts import WINDOW_COLOURS, chunk_contexts
from core.render.views import (
    first_words,
    highlight_mark,
    highlight_shapes,
)
from core.retrieve import Comparison, compare
from core.types import ChunkPolicy, Document
from pages import _ui

DEMO_DIR = _ui.SAMPLE_DIR / "datasheets"
DEMO_QUERY = "Corvane HX40 operating temperature range"
DEMO_POLICY = DEFAULT_POLICIES["structure"]  # one chunk per datasheet section
WIDE = 5000  # candidates kept per method: the cosine curve and the rerank stage use them
ALL = "__all__"
STYLE = """<style>
div.cs-hit { border-left: 3px solid #d5dde3; padding: .1rem 0 .1rem .55rem; margin: .2rem 0 0;
  font-size: .86rem; line-height: 1.35; }
div.cs-hit b.cs-rank { font-size: .95rem; margin-right: .4rem; }
span.cs-cos, span.cs-doc { color: #5b7083; margin-right: .4rem; }
span.cs-up { color: #2a9d55; font-weight: 700; } span.cs-down { color: #d1495b; font-weight: 700; }
div.cs-path { color: #33475b; font-weight: 600; } div.cs-words { color: #52606d; }
div.cs-hit.cs-gold { border-left-color: #ffb000; background: #fff8e1; }
div.cs-query { font-size: 1.15rem; font-weight: 600; padding: .4rem .7rem; border-radius: 6px;
  background: #eaf2f8; border: 1px solid #2e86ab; margin-bottom: .3rem; }
</style>"""


class EKey:
    """Session-state keys of the Compare and Evaluate pages (defaults in ``init_state``)."""

    SCOPE = "cs_cmp_scope"  # doc_id or ALL
    POLICY = "cs_cmp_policy"  # a policy key present in the index
    METHODS = "cs_cmp_methods"
    QUERY = "cs_cmp_query"
    K = "cs_cmp_k"
    RERANK = "cs_cmp_rerank"  # second stage on/off
    RERANK_METHOD = "cs_cmp_rerank_method"
    WEIGHTS = "cs_cmp_weights"  # prefix of the rerank weight inputs
    SELECTED = "cs_cmp_selected"  # chunk_id inspected
    JOB = "cs_index_job"  # IndexJob | None
    INDEX_DOCS = "cs_index_docs"
    INDEX_METHODS = "cs_index_methods"


DEFAULTS: dict[str, object] = {
    EKey.SCOPE: ALL, EKey.POLICY: None, EKey.METHODS: list(METHODS), EKey.QUERY: DEMO_QUERY,
    EKey.K: 10, EKey.RERANK: False, EKey.RERANK_METHOD: "late", EKey.SELECTED: None,
    EKey.JOB: None,
}  # fmt: skip


_MARKDOWN_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!<>|~$:")


def md(text: object) -> str:
    """``text`` for Streamlit markdown (captions, alerts): every markdown sign escaped, so a
    query id or a file name is shown as written and never becomes a link or an image."""
    return "".join("\\" + c if c in _MARKDOWN_PUNCTUATION else c for c in str(text))


def init_state() -> None:
    for key, default in DEFAULTS.items():
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
    """Why late chunking is unavailable with this model (not mean-pooled), or None."""
    try:
        check_late_pooling(encoder())
    except PoolingError as exc:
        return str(exc)
    return None


def usable_methods() -> list[str]:
    return [m for m in METHODS if m != "late" or late_refusal() is None]


def late_window_tokens(doc_tokens: int) -> tuple[int, int]:
    """(macro-window late chunking uses on a document of ``doc_tokens`` content tokens,
    the most the model takes in one pass), both in content tokens."""
    enc = encoder()
    return window_policy(enc, doc_tokens=doc_tokens).window, enc.content_position_limit


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
    """A token that changes whenever the index changes (part of the comparison cache key)."""
    raw = "|".join(f"{d.collection}:{d.doc_id}:{d.sha256}:{d.updated_at}" for d in entries)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


@st.cache_resource(max_entries=8, show_spinner=False)
def _compare_cached(
    query: str, methods: tuple, doc_id: str | None, policy_key: str, where: str, state: str,
    _policy: ChunkPolicy, _store,
) -> Comparison:  # fmt: skip
    scope = max(_store.count(model=encoder().name, method=m, policy=_policy) for m in methods)
    return compare(
        query, methods=methods, encoder=encoder(), store=_store, policy=_policy,
        k=max(1, min(WIDE, scope)), doc_id=doc_id,
    )  # fmt: skip


def comparison(query: str, methods, policy: ChunkPolicy, doc_id: str | None, entries):
    """The wide comparison (top ``WIDE`` per method), from memory when asked before."""
    opened = store()
    key = (policy.key, opened.location.describe(), index_state(entries))
    return _compare_cached(query, tuple(methods), doc_id, *key, policy, opened)


def narrow(cmp: Comparison, k: int, extra: set[str] = frozenset()) -> Comparison:
    """The top ``k`` per method; rank changes of chunks in any top ``k`` (or in ``extra``)."""
    results = {m: hits[:k] for m, hits in cmp.results.items()}
    shown = {h.chunk_id for hits in results.values() for h in hits} | set(extra)
    changes = [c for c in cmp.rank_changes if c.chunk_id in shown]
    return replace(cmp, k=k, results=results, rank_changes=changes)


@st.cache_resource(max_entries=16, show_spinner=False)
def _windows(doc_id: str, sha256: str, _doc: Document) -> list[LateWindow]:
    return late_windows(_doc, encoder())


def windows_of(doc: Document) -> list[LateWindow]:
    """The macro-windows late chunking ran over ``doc`` (the default window policy)."""
    return _windows(doc.doc_id, doc.sha256, doc)


@st.cache_data(max_entries=32, show_spinner=False)
def context_chunks(doc_id: str, policy_key: str, state: str, _policy, _store) -> list:
    """The document's stored chunks with their late context (``none`` without late)."""
    name = encoder().name
    for method in ("late", *METHODS):
        recs = _store.scope_records(model=name, method=method, policy=_policy, doc_id=doc_id)
        if recs.ids:
            return chunk_contexts(recs.ids, recs.metadatas, recs.texts, late=method == "late")
    return []


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
    """Load the documents an index names from their source files (same bytes only)."""
    known, found = _ui.library(), []
    for entry in entries:
        path = Path(entry.source)
        if entry.doc_id in known or not path.is_file():
            continue
        try:
            doc = _load_file(str(path.resolve()), path.stat().st_mtime)
        except ChunkscopeError:
            continue
        if (doc.doc_id, doc.sha256) == (entry.doc_id, entry.sha256):
            found.append(doc)
    register(found)


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
        step = self.methods.index(e.method) if e.method in self.methods else 0
        part = (step + (e.done / e.total if e.total else 0.0)) / len(self.methods)
        share = min(1.0, (e.doc_index + part) / max(e.n_docs, 1))
        unit = "macro-windows" if e.method == "late" else "chunks"
        what = {
            "parse": "parsing",
            "chunk": f"{e.total} chunks",
            "embed": f"embedding {e.method}: {e.done} of {e.total} {unit}",
            "store": f"storing {e.method}: {e.done} of {e.total} chunks",
            "skip": "already indexed",
            "done": "done",
        }.get(e.stage, e.stage)
        return share, f"Document {e.doc_index + 1} of {e.n_docs} ({e.doc_id}): {what}"

    def run(self, opened, enc, cache) -> None:
        try:
            self.report = index_documents(
                self.docs, policy=self.policy, methods=self.methods, encoder=enc, store=opened,
                progress=self._note, should_cancel=self.cancel.is_set, cache=cache,
            )  # fmt: skip
        except Exception as exc:  # a bug: keep its traceback in the log, say so on the page
            traceback.print_exc()
            self.error = f"indexing failed: {type(exc).__name__}: {exc}"

    def _note(self, event: IndexProgress) -> None:
        self.latest = event

    def summary(self) -> tuple[str, str]:
        """(level, one line) about the finished job: success, warning or error."""
        if self.error or self.report is None:
            return "error", self.error or "indexing stopped without a report"
        report = self.report
        failed = [d for d in report.documents if d.error]
        done = sum(bool(d.indexed or d.skipped) and not d.error for d in report.documents)
        line = (
            f"{done} of {len(self.docs)} document(s) indexed ({', '.join(report.methods)}, "
            f"policy {report.policy.key}) in {report.elapsed_s:.1f} s"
        )
        if report.cancelled:
            return "warning", f"Cancelled: {line}. Start again to finish the rest."
        if failed:
            return "warning", line + "; " + "; ".join(f"{d.doc_id}: {d.error}" for d in failed)
        return "success", line


def start_index(docs: list[Document], policy: ChunkPolicy, methods: list[str]) -> None:
    opened = store(create=True)
    job = IndexJob(docs=docs, methods=tuple(methods), policy=policy)
    job.thread = threading.Thread(target=job.run, args=(opened, encoder(), vector_cache()))
    job.thread.daemon = True
    job.thread.start()
    st.session_state[EKey.JOB] = job
    register(docs)


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
    level, line = job.summary()
    {"success": st.success, "warning": st.warning, "error": st.error}[level](md(line))
    if not job.announced:
        job.announced = True
        st.rerun()


def index_panel(entries) -> None:
    """Pick documents, a policy and methods and index them; or index the demo in one click."""
    job = st.session_state[EKey.JOB]
    busy = job is not None and job.running
    with st.expander("Index documents", expanded=not entries, icon=":material/database:"):
        pool = {**demo_documents(), **_ui.library()}
        picked = st.multiselect(
            "Documents", list(pool), default=list(demo_documents()), key=EKey.INDEX_DOCS
        )
        policy = _ui.policy_controls("index", horizontal=True)
        methods = st.multiselect(
            "Methods", usable_methods(), default=usable_methods(), key=EKey.INDEX_METHODS
        )
        if late_refusal():
            st.caption(f"Late is not offered: {md(late_refusal())}")
        cells = st.columns([1, 3])
        if cells[0].button("Index", type="primary", disabled=busy or not picked or not methods):
            start_index([pool[d] for d in picked], policy, methods)
        if cells[1].button(
            f"Index the demo set ({DEMO_POLICY.key})", disabled=busy, icon=":material/bolt:",
            help="The five demo datasheets, one chunk per section, every method.",
        ):  # fmt: skip
            start_index(list(demo_documents().values()), DEMO_POLICY, usable_methods())
        job_panel()


# -- ranked chunks and the inspected one --------------------------------------------------


def card(rank, cosine, path, text, *, doc="", note="", extra="", gold=False) -> None:
    """One ranked chunk as escaped HTML: rank, cosine, notes, heading path, first words."""
    shown = escape(path) if path else "<i>no heading</i>" if path is not None else ""
    where = f'<span class="cs-doc">{escape(doc)}</span>' if doc else ""
    st.html(
        f'<div class="cs-hit{" cs-gold" if gold else ""}"><b class="cs-rank">#{rank}</b>'
        f'<span class="cs-cos">cos {cosine:.3f}</span>{note}{where}'
        f'<div class="cs-path">{shown}</div>'
        f'<div class="cs-words">{escape(first_words(text, 18))}</div>{extra}</div>'
    )


def short_link(citation: Citation) -> None:
    """The citation link with a label short enough for a narrow column."""
    pages = citation.render().removeprefix(citation.doc_id + ", ")
    _ui.citation_link(citation, label=pages)


def move_note(delta: int | None, against: str) -> str:
    """``▲3 vs naive`` (a negative delta moved up)."""
    if delta is None:
        return f'<span class="cs-up">new vs {escape(against)}</span> '
    if not delta:
        return ""
    cls, arrow = ("cs-up", "▲") if delta < 0 else ("cs-down", "▼")
    return f'<span class="{cls}">{arrow}{abs(delta)} vs {escape(against)}</span> '


def hit_card(hit, rank: int, whole_index: bool, *, note: str = "", extra: str = "") -> None:
    """A stored hit as a card (the document named when the scope is the whole index)."""
    doc = hit.doc_id if whole_index else ""
    path = " › ".join(hit.heading_path)
    card(rank, hit.cosine, path, hit.text, doc=doc, note=note, extra=extra)
    short_link(hit.citation)


def method_column(view: Comparison, method: str, changes: dict, whole_index: bool) -> None:
    st.subheader(method, divider="gray")
    st.caption(f"{view.scope_sizes[method]:,} chunks searched")
    base = view.methods[0]
    for hit in view.results[method]:
        delta = changes[hit.chunk_id].deltas.get(method) if method != base else 0
        hit_card(hit, hit.rank, whole_index, note=move_note(delta, base))


def rerank_column(result, k: int, whole_index: bool) -> None:
    st.subheader(f"{result.method} + rerank", divider="violet")
    st.caption(f"{result.n_candidates:,} candidates reranked by visible features")
    for c in result.top(k):
        parts = " ".join(f"{n} {v:+.3f}" for n, v in c.contributions.items() if v)
        extra = f'<div class="cs-words">{escape(parts)} = {c.score:.3f}</div>'
        note = move_note(c.rank_change, "first stage")
        hit_card(c.hit, c.rank, whole_index, note=note, extra=extra)


def chunk_label(hit, whole_index: bool) -> str:
    """Short name of a chunk for pickers and charts: its heading path (which usually starts
    with the document title), with the document named when the path does not say it."""
    path = " › ".join(hit.heading_path) or first_words(hit.text, 6)
    named = hit.doc_title and hit.doc_title in path
    return f"{path} ({hit.doc_id})" if whole_index and not named else path


def on_select(chart_key: str, state_key: str) -> None:
    """Chart click -> ``state_key`` (points carry chunk or query ids as customdata)."""
    points = st.session_state[chart_key].selection.points
    data = points[0].get("customdata") if points else None
    if data:
        st.session_state[state_key] = data[0] if isinstance(data, list) else data


def window_shapes(doc: Document, windows, char_start: int, char_end: int, page: int) -> list:
    """The chunk's late windows shaded on ``page`` (what its tokens attended to) and the
    chunk itself highlighted on top."""
    shapes = [
        Shape(
            bbox_pt=line.bbox_pt, fill=WINDOW_COLOURS[n % 2], fill_opacity=0.14,
            title=f"late window {w.index + 1}: tokens {w.token_start}-{w.token_end}",
            css_class="cs-window",
        )
        for n, w in enumerate(windows)
        for line in span_line_boxes(doc, w.char_start, w.char_end, page=page)
    ]  # fmt: skip
    return shapes + highlight_shapes(doc, char_start, char_end, page)


def window_marks(windows, char_start: int, char_end: int) -> list[Mark]:
    """Text marks: the windows' characters around the chunk, and the chunk highlighted."""
    lo = min((w.char_start for w in windows), default=char_start)
    hi = max((w.char_end for w in windows), default=char_end)
    marks = [
        Mark(char_start=a, char_end=b, css_class="cs-window", colour=WINDOW_COLOURS[0])
        for a, b in ((lo, char_start), (char_end, hi))
        if b > a
    ]
    return sorted([*marks, highlight_mark(char_start, char_end)], key=lambda m: m.char_start)


def chunk_inspector(wide: Comparison, hit, change, reranked) -> None:
    """The chunk on its page with its late windows shaded, and its score under each method."""
    late = next((h for h in wide.results.get("late", []) if h.chunk_id == hit.chunk_id), None)
    doc = _ui.library().get(hit.doc_id)
    left, right = st.columns([3, 2], gap="medium")
    with right:
        rows = [
            {"method": m, "rank": change.ranks[m], "cosine": change.cosines[m]}
            for m in (wide.methods if change else ())
        ]
        if reranked:
            found = next(c for c in reranked.chunks if c.chunk_id == hit.chunk_id)
            rows.append(
                {"method": f"{reranked.method}+rerank", "rank": found.rank, "score": found.score}
            )
        st.dataframe(
            rows,
            hide_index=True,
            column_config={
                "cosine": st.column_config.NumberColumn(format="%.4f"),
                "score": st.column_config.NumberColumn("rerank score", format="%.4f"),
            },
        )
        _ui.citation_link(hit.citation)
        if late is not None:
            used = ", ".join(str(w + 1) for w in late.windows)
            st.caption(
                f"Late vector: {late.context} context, {late.full_context_tokens} of "
                f"{late.token_count} tokens with full context, from window(s) {used}."
            )
    with left:
        if doc is None:
            st.info(f"{md(hit.doc_id)} is not loaded in this session: add it in the Library.")
            return
        windows = [w for w in windows_of(doc) if late is not None and w.index in late.windows]
        if doc.is_paged and hit.pages:
            shapes = window_shapes(doc, windows, hit.char_start, hit.char_end, hit.pages[0])
            _ui.show_html(_ui.page_figure(doc, hit.pages[0], shapes))
            st.caption(f"Page {hit.pages[0]}: the chunk in yellow, its late window(s) shaded.")
            return
        a = max(0, hit.char_start - 800, min((w.char_start for w in windows), default=0))
        b = min(len(doc.text), hit.char_end + 800)
        marks = window_marks(windows, hit.char_start, hit.char_end)
        _ui.show_html(marked_text_html(doc.text[a:b], a, marks))
