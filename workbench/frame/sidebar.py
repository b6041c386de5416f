"""The frame around every page: state, stylesheet and the sidebar, drawn once per run.

Every page starts with ``sidebar.entry("pages/<name>.py")``; ``app.py`` builds the
navigation from ``MENU``, calls ``follow_redirect`` and runs the page inside ``framed()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from core.config import ENV_CHROMA, ENV_STORE
from core.errors import ChunkscopeError
from core.registry import plugins
from core.render.markup import STYLESHEET
from core.render.views import kind_label
from workbench.documents import chunk_sets, chunk_store, reads, scans, session
from workbench.frame import roles
from workbench.state import FrameKey, Key, doc_widget
from workbench.widgets import wording
from workbench.widgets.wording import md

# The menu: sections of (page script, title, icon), in order; the first page is home.
MENU: dict[str, list[tuple[str, str, str]]] = {
    "Inspect": [
        ("pages/library.py", "Library", ":material/folder_open:"),
        ("pages/parse.py", "Parse", ":material/view_quilt:"),
        ("pages/chunks.py", "Chunks", ":material/segment:"),
        ("pages/source.py", "Source", ":material/format_quote:"),
    ],
    "Retrieve": [
        ("pages/compare.py", "Compare", ":material/compare_arrows:"),
        ("pages/map.py", "Map", ":material/scatter_plot:"),
        ("pages/evaluate.py", "Evaluate & triage", ":material/fact_check:"),
        ("pages/tune.py", "Tune", ":material/tune:"),
    ],
}
HOME = MENU["Inspect"][0][0]
# Citation links wrap in a narrow column instead of ending in an ellipsis mid-number
# (Streamlit draws a page link on one line, cut off where the column ends).
WIDGET_CSS = """
p.cs-menu-section { font-size: .82rem; color: #5b6b79; margin: .6rem 0 .1rem .2rem; }
[data-testid="stPageLink-NavLink"] * { white-space: normal !important;
  text-overflow: clip !important; overflow-wrap: anywhere; }
"""


@contextmanager
def framed() -> Iterator[None]:
    """``app.py`` runs the page inside this: state, stylesheet and sidebar come first."""
    _draw_frame()
    st.session_state[Key.FRAMED] = True
    try:
        yield
    finally:
        st.session_state[Key.FRAMED] = False


def entry(page_path: str) -> None:
    """First call of every page. Streamlit may run a page script on its own, without
    ``app.py``, while no ``st.navigation`` has run in the process yet (the first request
    to a fresh server; every ``AppTest`` run). A first visit then hands over to
    ``app.py``, which builds the navigation and reopens this page with its query; later
    runs draw the frame (state, stylesheet, sidebar) here."""
    if Key.DOCS not in st.session_state:
        st.session_state[Key.REDIRECT] = (page_path, st.query_params.to_dict())
        st.switch_page("app.py")
    if not st.session_state.get(Key.FRAMED):
        _draw_frame()


def _draw_frame() -> None:
    session.init_state()
    chunk_sets.offer()  # imported chunk sets join the policies before any page asks
    st.html(f"<style>{STYLESHEET}{WIDGET_CSS}</style>")
    with reads.cold_start_notice(), st.sidebar:
        sidebar()


def follow_redirect() -> None:
    """Called by ``app.py`` after ``st.navigation``: reopen the page ``entry`` asked for."""
    target = st.session_state.pop(Key.REDIRECT, None)
    if target is not None:
        st.switch_page(target[0], query_params=target[1])


def menu() -> None:
    """The pages, by section: the navigation's own menu is hidden (see ``app.py``)."""
    for section, pages in MENU.items():
        st.markdown(f'<p class="cs-menu-section">{section}</p>', unsafe_allow_html=True)
        for path, title, icon in pages:
            st.page_link(path, label=title, icon=icon)


def sidebar() -> None:
    """The menu, document picker, store location and model facts, who may edit, on every
    page."""
    menu()
    st.divider()
    docs, state = session.library(), st.session_state
    ids = list(docs)
    linked = st.query_params.get("doc")  # a deep link's document is the current one, once:
    if linked in docs and state.get(FrameKey.LINKED_DOC) != linked:  # the picker may move on after
        state[FrameKey.LINKED_DOC] = linked
        if state.get(Key.DOC) != linked:
            session.select(linked)
    current = session.current_doc()
    st.selectbox(
        "Document",
        ids,
        index=ids.index(current.doc_id) if current else None,
        format_func=lambda d: f"{d} ({kind_label(docs[d])})",
        placeholder="No documents yet",
        **wording.synced(doc_widget(state[Key.DOC_VERSION]), Key.DOC, reset_page=True),
    )
    scans.sidebar_choice()
    with st.expander("Store and model", icon=":material/storage:"):
        if roles.editing_enabled():  # a viewer reads where the store is, below
            _store_controls()
        try:
            opened = chunk_store.store()
            st.caption(opened.location.describe() if opened else "No index in this folder yet.")
            info = session.model_info()
            st.caption(
                f"Model **{info.name}**: window {info.window_tokens} tokens "
                f"({info.text_tokens} for text), {info.pooling} pooling"
            )
        except ChunkscopeError as exc:
            st.error(md(exc), icon=":material/error:")
        for plugin in plugins():  # installed packages' entry points (core.registry)
            what = ", ".join(plugin.entries) or plugin.name
            origin = f"failed to load: {plugin.error}" if plugin.error else f"from {plugin.package}"
            st.caption(md(f"Plugin {plugin.kind} {what} ({origin})"))
    roles.sign_in_panel()


def _store_controls() -> None:
    """Where the store is: an editor's choice (the store holds everyone's library)."""
    state = st.session_state
    kinds = ("folder", "server")
    st.radio(
        "Store",
        kinds,
        index=kinds.index(state[Key.STORE_KIND]),
        horizontal=True,
        format_func={"folder": "Embedded folder", "server": "Chroma server"}.get,
        **roles.editor_synced(FrameKey.STORE_KIND_WIDGET, Key.STORE_KIND, "change the store"),
    )
    st.text_input(
        "HOST:PORT" if state[Key.STORE_KIND] == "server" else "Folder",
        value=state[Key.STORE_ADDR],
        help=f"Defaults come from ${ENV_CHROMA} (server) or ${ENV_STORE} (folder).",
        **roles.editor_synced(FrameKey.STORE_ADDR_WIDGET, Key.STORE_ADDR, "change the store"),
    )
