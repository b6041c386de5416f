"""The engine as cached resources, jobs and state, for Compare, Map, Evaluate and Tune.

- ``init_state``: the session-state keys of these pages (``workbench.state.EngineKey``)
  at their defaults, once;
- ``encoder``/``vector_cache`` (``st.cache_resource``); the store is ``chunk_store.store()``;
- ``comparison``: one comparison per query, scope, policy, methods, shown ``k`` and index
  state (each method ranked ``WIDE`` deep, its top ``k`` read), cached, so a repeated
  query answers from memory;
- indexing: a ``core.index.background.IndexJob`` in a background thread, polled by a fragment
  with a progress bar and a cancel button (``core.index.indexer`` stops between
  batches when asked);
- documents: the demo datasheets (bundled samples) and the documents an index names
  (loaded from their source files, so their citations open in the Source view).

Ranked-chunk cards and the inspected chunk are drawn by ``workbench.widgets.result_cards``;
query sets and saved runs are in ``run_files``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from core import defaults
from core import methods as registry
from core.chunk import default_policy
from core.embed import Encoder, VectorCache, load_encoder
from core.embed.cache import shared_cache
from core.embed.late import late_windows, window_policy
from core.embed.records import LateWindow
from core.errors import ChunkscopeError, PoolingError
from core.index.background import IndexJob
from core.index.indexer import index_documents
from core.methods.embedding import check_late_pooling
from core.provenance.types import ChunkPolicy, Document
from core.retrieve.comparison import Comparison, compare
from core.store import ChunkStore, IndexedDoc
from core.store.contexts import ChunkContext, chunk_contexts
from workbench.documents import chunk_store, session
from workbench.documents.reads import read_document
from workbench.engine import compare_model as model
from workbench.engine import jobs
from workbench.frame import roles
from workbench.state import EngineKey, Key
from workbench.widgets import controls
from workbench.widgets.wording import md

DEMO_DIR = session.DATASHEET_DIR
DEMO_QUERY = "Corvane HX40 operating temperature range"
DEMO_POLICY = default_policy(defaults.POLICY)  # the index's, Evaluate's and the CLI's
COMPARE_METHODS = defaults.COMPARED
WIDE = 5000  # depth ranked per method: the score curve and the rerank stage use its scores
ALL = "__all__"
STYLE = """<style>
div.cs-hit { border-left: 3px solid #d5dde3; padding: .1rem 0 .1rem .55rem; margin: .2rem 0 0;
  font-size: .86rem; line-height: 1.35; overflow-wrap: anywhere; }
div.cs-hit b.cs-rank { font-size: .95rem; margin-right: .4rem; }
span.cs-cos, span.cs-doc { color: #5b7083; margin-right: .4rem; }
span.cs-cos { white-space: nowrap; }
span.cs-up { color: #2a9d55; font-weight: 700; } span.cs-down { color: #d1495b; font-weight: 700; }
div.cs-path { color: #33475b; font-weight: 600; } div.cs-words { color: #52606d; }
div.cs-hit.cs-gold { border-left-color: #ffb000; background: #fff8e1; }
div.cs-query { font-size: 1.15rem; font-weight: 600; padding: .4rem .7rem; border-radius: 6px;
  background: #eaf2f8; border: 1px solid #2e86ab; margin-bottom: .3rem; }
</style>"""


K = EngineKey
DEFAULTS: dict[str, object] = {
    K.SCOPE: ALL, K.POLICY: None, K.METHODS: list(COMPARE_METHODS), K.QUERY: DEMO_QUERY,
    K.K: defaults.K, K.RERANK: False, K.RERANK_METHOD: registry.PAIRED[-1], K.SELECTED: None,
    K.JOB: None,
}  # fmt: skip


def init_state() -> None:
    for key, default in DEFAULTS.items():
        st.session_state.setdefault(key, default)
    st.html(STYLE)


# -- engine resources -------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the embedding model…")
def encoder() -> Encoder:
    return load_encoder()


@st.cache_resource(show_spinner=False)
def vector_cache() -> VectorCache:
    """Vectors by (model, method, document hash, span): indexing, evaluation, sweeps and
    the CLI share them through the one on-disk cache (``core.embed.cache.shared_cache``),
    across restarts; in memory only when that is switched off."""
    shared = shared_cache()
    return VectorCache() if shared is None else shared  # not ``or``: an empty cache is falsy


def require_encoder() -> None:
    """Stop the page with the one-line reason when the configured model cannot load."""
    try:
        encoder()
    except ChunkscopeError as exc:
        st.error(md(exc), icon=":material/error:")
        st.stop()


def indexed_here() -> tuple[ChunkStore | None, list[IndexedDoc]]:
    """The sidebar's opened store (or None) and its indexed entries for the model, once the
    model loads (stops the page with the one-line reason when either cannot open)."""
    require_encoder()
    try:
        opened = chunk_store.store()
        return opened, (indexed(opened) if opened else [])
    except ChunkscopeError as exc:
        st.error(md(exc), icon=":material/error:")
        st.stop()


def pick_policy_and_scope(
    policy_cell: Any, scope_cell: Any, entries: Sequence[Any]
) -> tuple[ChunkPolicy, list[str], str | None]:
    """The Policy and Scope pickers Compare and Map share (one choice for both pages): the
    policy picked, the documents indexed under it, and the document in scope (None: the
    whole index)."""
    state = st.session_state
    policies = model.reconcile_policy(state, EngineKey.POLICY, entries, DEMO_POLICY.key)
    policy = policies[policy_cell.selectbox("Policy", list(policies), key=EngineKey.POLICY)]
    docs_here = model.documents_under(entries, policy.key)
    scope = scope_cell.selectbox(
        "Scope", model.reconcile_scope(state, EngineKey.SCOPE, docs_here, ALL),
        key=EngineKey.SCOPE, format_func=lambda d: scope_label(d, len(docs_here)),
    )  # fmt: skip
    return policy, docs_here, None if scope == ALL else scope


def scope_label(scope_id: str, n_docs: int) -> str:
    """``Whole index (3 documents)``, or the document's id."""
    if scope_id != ALL:
        return scope_id
    return f"Whole index ({n_docs:,} document{'s' if n_docs != 1 else ''})"


def late_refusal() -> str | None:
    """Why late chunking is unavailable with this model (not mean-pooled), or None."""
    try:
        check_late_pooling(encoder())
    except PoolingError as exc:
        return str(exc)
    return None


def usable_methods() -> list[str]:
    """Registered stored methods the loaded model can run (what an index run offers)."""
    refused = late_refusal() is not None
    return [
        m for m in registry.base_methods() if not (refused and registry.get(m).needs_mean_pooling)
    ]


def late_window_tokens(doc_tokens: int) -> tuple[int, int]:
    """(macro-window late chunking uses on a document of ``doc_tokens`` content tokens,
    the most the model takes in one pass), both in content tokens."""
    enc = encoder()
    return window_policy(enc, doc_tokens=doc_tokens).window, enc.content_position_limit


def indexed(opened: ChunkStore) -> list[IndexedDoc]:
    """Complete document versions stored for this model."""
    name = encoder().name
    return [d for d in opened.indexed_documents() if d.complete and d.model == name]


def index_state(entries: Iterable[IndexedDoc]) -> str:
    """A token that changes whenever the index changes (part of the comparison cache key)."""
    raw = "|".join(f"{d.collection}:{d.doc_id}:{d.sha256}:{d.updated_at}" for d in entries)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


@st.cache_resource(max_entries=8, show_spinner=False)
def _compare_cached(
    query: str, methods: tuple[str, ...], doc_id: str | None, policy_key: str, where: str,
    state: str, k: int, _policy: ChunkPolicy, _store: ChunkStore,
) -> Comparison:  # fmt: skip
    stored = registry.needs_indexing(methods)
    scope = max(_store.count(model=encoder().name, method=m, policy=_policy) for m in stored)
    depth = max(1, min(WIDE, scope))
    return compare(
        query, methods=methods, encoder=encoder(), store=_store, policy=_policy,
        k=min(k, depth), doc_id=doc_id, depth=depth,
    )  # fmt: skip


def comparison(
    query: str,
    methods: Sequence[str],
    policy: ChunkPolicy,
    doc_id: str | None,
    entries: Iterable[IndexedDoc],
    k: int,
) -> Comparison:
    """Each method ranked ``WIDE`` deep with its top ``k`` read (``core.retrieve.comparison``), from
    memory when asked before."""
    opened = chunk_store.existing_store()
    key = (policy.key, opened.location.describe(), index_state(entries))
    return _compare_cached(query, tuple(methods), doc_id, *key, k, policy, opened)


@st.cache_resource(max_entries=16, show_spinner=False)
def _windows(doc_id: str, sha256: str, _doc: Document) -> list[LateWindow]:
    return late_windows(_doc, encoder())


def windows_of(doc: Document) -> list[LateWindow]:
    """The macro-windows late chunking ran over ``doc`` (the default window policy)."""
    return _windows(doc.doc_id, doc.sha256, doc)


@st.cache_data(max_entries=32, show_spinner=False)
def context_chunks(
    doc_id: str, policy_key: str, where: str, state: str, _policy: ChunkPolicy, _store: ChunkStore
) -> list[ChunkContext]:
    """The document's stored chunks with their late context (``none`` without late).

    ``where`` is the store's ``location.describe()``: with ``policy_key`` and ``state`` it
    keys the cache, so another store never answers from this one's entry."""
    name = encoder().name
    pooled = sorted(registry.base_methods(), key=lambda m: not registry.get(m).needs_mean_pooling)
    for method in pooled:  # a method that pools in context windows knows each chunk's
        recs = _store.scope_records(model=name, method=method, policy=_policy, doc_id=doc_id)
        if recs.ids:
            late = registry.get(method).needs_mean_pooling
            return chunk_contexts(recs.ids, recs.metadatas, recs.texts, late=late)
    return []


# -- documents --------------------------------------------------------------------------


def demo_documents() -> dict[str, Document]:
    """The five demo datasheets, by file name (bundled samples, read once per process)."""
    return session.datasheets()


@st.cache_resource(show_spinner=False)
def _load_file(path: str, mtime: float) -> Document:
    return read_document(path)


def register(docs: Iterable[Document]) -> None:
    """Put documents in this session's library, so their citations open in Source."""
    held = st.session_state[Key.DOCS]
    for doc in docs:
        if session.library().get(doc.doc_id, doc).sha256 == doc.sha256:
            held.setdefault(doc.doc_id, doc)


def load_indexed_sources(entries: Iterable[IndexedDoc]) -> None:
    """Load the documents an index names from their source files (same bytes only)."""
    known, found = session.library(), []
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


def start_index(docs: list[Document], policy: ChunkPolicy, methods: list[str]) -> None:
    """Index ``docs`` in the background (an embedded store folder is made when missing)."""
    if not roles.require_editor("index documents"):
        return
    opened = chunk_store.store(create=True)
    job = IndexJob(docs=docs, methods=tuple(methods), policy=policy, index=index_documents)
    job.start(opened, encoder(), vector_cache())
    st.session_state[EngineKey.JOB] = job
    register(docs)


def indexing() -> bool:
    """True while this session's indexing job runs."""
    job: IndexJob | None = st.session_state[EngineKey.JOB]
    return job is not None and job.running


def job_panel() -> None:
    """Progress bar and cancel button of the indexing job; polls twice a second while it runs."""
    jobs.job_panel(st.session_state[EngineKey.JOB], stop_label="Cancel indexing")


def index_panel(entries: Sequence[IndexedDoc]) -> None:
    """Pick documents, a policy and methods and index them; or index the demo in one click."""
    busy = indexing()
    with st.expander("Index documents", expanded=not entries, icon=":material/database:"):
        pool = {**demo_documents(), **session.library()}
        own = session.own_documents()  # the user's documents, once there are any, else the demo
        picked = st.multiselect(
            "Documents", list(pool), default=list(own or demo_documents()), key=EngineKey.INDEX_DOCS
        )
        policy = controls.policy_controls("index", horizontal=True, first=DEMO_POLICY.name)
        methods = st.multiselect(
            "Methods", usable_methods(), default=usable_methods(), key=EngineKey.INDEX_METHODS
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
    job_panel()  # outside the expander: it collapses once something is indexed
