"""The session's documents: bundled samples (the datasheet demo set included), documents
read in this session, the store's kept documents, and the one the sidebar has picked.

- ``init_state``: the frame's session-state keys (``workbench.state.Key``) at their
  defaults, once;
- ``tokenizer``/``model_info``: the configured model's tokenizer and facts, cached;
- ``library``/``current_doc``/``require_doc``: what pages read their document from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core import settings
from core.config import DEFAULT_STORE_DIRNAME
from core.errors import ChunkscopeError
from core.formats.format_registry import is_supported_name
from core.model.paths import resolve_model_dir
from core.model.tokens import HFTokenizer, load_tokenizer
from core.provenance.types import Document
from core.render.views import document_row
from workbench.documents import chunk_store, kept_docs
from workbench.documents.reads import read_document
from workbench.state import Key
from workbench.widgets.wording import md

ROOT = Path(__file__).resolve().parents[2]


SAMPLE_DIR = ROOT / "sample_docs"


DATASHEET_DIR = SAMPLE_DIR / "datasheets"  # the retrieval demo set, bundled as samples too


LIBRARY_PAGE = "pages/library.py"


def init_state() -> None:
    chroma = settings.CHROMA.read() or ""
    for key, default in (
        (Key.DOCS, {}),
        (Key.NOTES, []),
        (Key.PENDING, {}),
        (Key.SEEN_UPLOADS, set()),
        (Key.PREVIOUS, {}),
        (Key.DOC, None),
        (Key.DOC_VERSION, 0),
        (Key.PAGE, 1),
        (Key.FULL_WIDTH, False),
        (Key.PARSER, "fast"),
        (Key.LAYOUT_LIMIT_S, None),  # None: the configured limit (core.ingest.limits)
        (Key.PARSE_TIMES, {}),
        (Key.STORE_KIND, "server" if chroma else "folder"),
        (Key.STORE_ADDR, chroma or str(settings.STORE.read() or DEFAULT_STORE_DIRNAME)),
    ):
        st.session_state.setdefault(key, default)


@st.cache_resource(show_spinner="Loading the tokenizer…")
def tokenizer() -> HFTokenizer:
    return load_tokenizer()


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    name: str
    window_tokens: int  # max_seq_length, special tokens included
    text_tokens: int  # what is left of the window for a text's own tokens
    whole_doc_tokens: int  # content positions: late chunking's one-pass document limit
    pooling: str


def model_info() -> ModelInfo:
    """The model's facts as the encoder reads them (``core.embed.modelconfig``), without
    loading its weights; ``ModelError`` (one line) for a folder that cannot be read."""
    return _model_info(resolve_model_dir())


@st.cache_resource(show_spinner=False)
def _model_info(path: Path) -> ModelInfo:
    from core.embed.encoder import read_pooling
    from core.embed.modelconfig import read_model_limits
    from core.model.paths import pooling_choice

    limits = read_model_limits(path)
    window, positions = limits.seq_tokens, limits.position_tokens
    specials = tokenizer().special_tokens_per_text
    return ModelInfo(
        name=tokenizer().name,
        window_tokens=window,
        text_tokens=window - specials,
        whole_doc_tokens=positions - specials,
        pooling=pooling_choice() or read_pooling(path) or "unknown",
    )


def model_info_or_stop() -> ModelInfo:
    """``model_info``, or the folder's one-line error and the rest of the page skipped."""
    try:
        return model_info()
    except ChunkscopeError as exc:
        st.error(md(exc), icon=":material/error:")
        st.stop()
        raise  # st.stop() raises; this line is for the type checker


@st.cache_resource(show_spinner="Reading the bundled samples…")
def samples() -> dict[str, Document]:
    """Bundled demo documents (``sample_docs/`` and its datasheet demo set), read once per
    process; PDFs first, longest first, so the richest sample is the one shown at start.
    Citations of any of them (a Compare hit, a deep link) open in a fresh session."""
    found = [
        read_document(path)
        for folder in (SAMPLE_DIR, DATASHEET_DIR)
        for path in folder.iterdir()
        if is_supported_name(path) and path.name != "README.md"
    ]
    found.sort(key=lambda d: (not d.is_paged, -len(d.pages), d.doc_id))
    return {doc.doc_id: doc for doc in found}


def datasheets() -> dict[str, Document]:
    """The datasheet demo set (samples from ``DATASHEET_DIR``), by file name."""
    picked = [d for d in samples().values() if Path(d.source).parent == DATASHEET_DIR]
    return {d.doc_id: d for d in sorted(picked, key=lambda d: Path(d.source).name)}


def library() -> dict[str, Document]:
    """Every document on hand: samples, the store's library (what any session or
    ``chunkscope index`` kept), overridden by this session's uploads."""
    return {**samples(), **kept_docs.kept_documents(), **st.session_state[Key.DOCS]}


def own_documents() -> dict[str, Document]:
    """The user's documents: the store's library and this session's uploads, without the
    bundled samples (a sample counts only when its bytes were uploaded or kept)."""
    bundled = {d.doc_id: d.sha256 for d in samples().values()}
    held = {**kept_docs.kept_documents(), **st.session_state[Key.DOCS]}
    return {i: d for i, d in held.items() if bundled.get(i) != d.sha256}


def select(doc_id: str) -> None:
    """Make ``doc_id`` the current document (the picker shows it from the next run)."""
    st.session_state[Key.DOC] = doc_id
    st.session_state[Key.DOC_VERSION] += 1
    st.session_state[Key.PAGE] = 1


def current_doc() -> Document | None:
    """The document picked in the sidebar (None when the library is empty)."""
    docs = library()
    chosen = st.session_state.get(Key.DOC)
    if chosen not in docs:
        chosen = next(iter(docs), None)
        st.session_state[Key.DOC] = chosen
    return docs.get(chosen) if chosen else None


def require_doc() -> Document:
    """The current document, or an empty state pointing at the Library (stops the page)."""
    doc = current_doc()
    if doc is None:
        st.info("No document yet: upload one or pick a sample on the Library page.")
        st.page_link(LIBRARY_PAGE, label="Open the Library", icon=":material/folder_open:")
        st.stop()
    return doc


@st.cache_data(max_entries=256, show_spinner=False)
def doc_token_count(doc_id: str, sha256: str, _doc: Document) -> int:
    return tokenizer().count(_doc.text)


def library_rows() -> list[dict[str, object]]:
    """One table row per library document (the Library page's table)."""
    indexed, uploaded = chunk_store.indexed_versions(), st.session_state[Key.DOCS]
    kept = {e.doc_id: e.sha256 for e in kept_docs.kept_entries()}
    rows = []
    for doc in library().values():
        versions = indexed.get(doc.doc_id, set())
        state = "yes" if doc.sha256 in versions else ("older version" if versions else "no")
        tokens = doc_token_count(doc.doc_id, doc.sha256, doc)
        origin = "library" if kept.get(doc.doc_id) == doc.sha256 else "sample"
        if origin == "sample" and doc.doc_id in uploaded:
            origin = "this session"
        rows.append(document_row(doc, tokens=tokens, indexed=state, origin=origin))
    return rows
