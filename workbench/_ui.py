"""Glue shared by the workbench pages: state keys, cached loaders, the library.

Pages stay thin: layout and widgets only. Every page starts with
``_ui_frame.entry("workbench/<name>.py")``. What several pages need lives here, once:

- ``Key``: every session-state key, initialised by ``init_state`` with ``setdefault``;
  widgets write to them through ``synced`` callbacks;
- cached loaders: ``tokenizer``/``store`` (parse and chunk results: ``_ui_parse``);
- the library: bundled samples (the datasheet demo set included) plus documents read in
  this session;
- ``md``: the one escaper for text shown as Markdown (HTML goes through
  ``core.render.markup.escape``).

The frame and sidebar are in ``_ui_frame``, shared widgets in ``_ui_controls``, citation
links and document views in ``_ui_cite``, cached parses and chunks in ``_ui_parse``,
reading uploads into the library in ``_ui_uploads``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.config import DEFAULT_STORE_DIRNAME, ENV_CHROMA, ENV_STORE
from core.errors import ChunkscopeError
from core.formats.format_registry import all_formats, describe_suffixes, is_supported_name
from core.model.paths import resolve_model_dir
from core.model.tokens import load_tokenizer
from core.provenance.types import Document
from core.render.views import document_row
from workbench import _ui_library, _ui_store
from workbench._ui_reads import read_document
from workbench.state import Key

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_docs"
DATASHEET_DIR = SAMPLE_DIR / "datasheets"  # the retrieval demo set, bundled as samples too
LIBRARY_PAGE = "pages/library.py"


def upload_help() -> str:
    """The uploader's help: every format it reads with its suffixes (the registry's).

    The uploader takes any file and ``read_upload`` refuses the others in one line
    (``core.formats.format_registry.upload_format``): given a ``type=`` list, Streamlit's browser
    side refuses them itself with nothing but "<MIME type> files are not allowed"."""
    return f"Reads {describe_suffixes()}. Any other file is refused with a line saying so."


def format_labels() -> str:
    """``"PDF, text, Markdown, ..."`` for the uploader's label."""
    return ", ".join(dict.fromkeys(spec.label for spec in all_formats()))


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One line about an uploaded file: ``level`` is success, warning or error."""

    name: str
    level: str
    text: str


TABLE_ROW_PX = 35  # st.dataframe's row height (its header row too)


def table_height(n_rows: int) -> int:
    """Pixels for ``st.dataframe`` to show ``n_rows`` and its header without scrolling."""
    return TABLE_ROW_PX * (n_rows + 1) + 3


_MARKDOWN_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!<>|~$:")


def md(text: object) -> str:
    """``text`` for Streamlit markdown (captions, alerts, link labels): every markdown sign
    escaped, so a query id, a file name or a quote is shown as written and never becomes a
    link, an image or a formula."""
    return "".join("\\" + c if c in _MARKDOWN_PUNCTUATION else c for c in str(text))


def init_state() -> None:
    chroma = os.environ.get(ENV_CHROMA, "").strip()
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
        (Key.PARSE_TIMES, {}),
        (Key.STORE_KIND, "server" if chroma else "folder"),
        (Key.STORE_ADDR, chroma or os.environ.get(ENV_STORE, "") or DEFAULT_STORE_DIRNAME),
    ):
        st.session_state.setdefault(key, default)


# -- cached resources --------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the tokenizer…")
def tokenizer():  # -> core.model.tokens.HFTokenizer
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


# -- library ------------------------------------------------------------------------------


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
    return {**samples(), **_ui_library.kept_documents(), **st.session_state[Key.DOCS]}


def own_documents() -> dict[str, Document]:
    """The user's documents: the store's library and this session's uploads, without the
    bundled samples (a sample counts only when its bytes were uploaded or kept)."""
    bundled = {d.doc_id: d.sha256 for d in samples().values()}
    held = {**_ui_library.kept_documents(), **st.session_state[Key.DOCS]}
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


def synced(widget_key: str, state_key: str, *, reset_page: bool = False) -> dict:
    """Widget kwargs that copy its value to ``state_key`` on change. Values live under
    our own keys, not widget keys, so they survive pages that do not draw the widget."""

    def copy() -> None:
        st.session_state[state_key] = st.session_state[widget_key]
        if reset_page:
            st.session_state[Key.PAGE] = 1

    return {"key": widget_key, "on_change": copy}


@st.cache_data(max_entries=256, show_spinner=False)
def doc_token_count(doc_id: str, sha256: str, _doc: Document) -> int:
    return tokenizer().count(_doc.text)


def library_rows() -> list[dict[str, object]]:
    """One table row per library document (the Library page's table)."""
    indexed, uploaded = _ui_store.indexed_versions(), st.session_state[Key.DOCS]
    kept = {e.doc_id: e.sha256 for e in _ui_library.kept_entries()}
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
