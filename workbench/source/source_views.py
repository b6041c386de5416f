"""The Source page's parts: which document a link opens (this session, a sample, the
store's library, a kept older version, or an encrypted one after its password), the cited
page at a reading zoom, the text around the citation, and the views of reflowable formats
that carry more than offsets (a transcript's turns with their times, the raw bytes of an
HTML file). The HTML is built (and escaped) by ``core.render``."""

from __future__ import annotations

import re

import streamlit as st

from core.errors import ChunkscopeError
from core.library import LibraryEntry
from core.provenance.cite import Citation
from core.provenance.geometry import union_of
from core.provenance.types import BBox, Document
from core.render.links import source_params
from core.render.markup import marked_text_html
from core.render.overlay import span_line_boxes
from core.render.source_views import raw_source_html, transcript_html
from core.render.views import context_window, focus_view, highlight_mark, highlight_shapes
from workbench.documents import kept_docs, scans, session
from workbench.state import Key, SourceKey, unlock_form
from workbench.widgets import cite_view
from workbench.widgets.wording import md


def reflowable_view(doc: Document, start: int, end: int) -> None:
    """The left column of the Source page for a document without pages."""
    if doc.cues:
        st.caption(
            f"{md(doc.doc_id)} is a transcript: no pages, so its provenance is character "
            "offsets and the times of the cues they touch. The cited turns, lit:"
        )
        cite_view.show_html(transcript_html(doc, start, end))
        return
    cite_view.no_pages_note(doc)
    found = doc.raw_range(start, end)
    if doc.char_raw_span is not None:
        where = f"bytes {found[0]:,}-{found[1]:,}" if found else "no bytes"
        st.markdown(f"**In the raw source** ({where} of the file, tags and references as written)")
        cite_view.show_html(raw_source_html(doc, start, end))


# -- which document a link opens ------------------------------------------------------------

ZOOMS = ("Cited lines", "Around them", "Whole page")


def _unknown_document(doc_id: str) -> None:
    """Say the link's document is not held anywhere, offer the library; stops the page."""
    known = list(session.library())
    st.error(
        f"No document {md(repr(doc_id))} is in the library: it was removed, or never "
        "added to this store. Upload it on the Library page, then open the link again.",
        icon=":material/link_off:",
    )
    if known:
        shown = ", ".join(md(d) for d in known[:12]) + (", …" if len(known) > 12 else "")
        st.caption(f"The library holds {len(known)} document(s): {shown}")
    st.page_link(session.LIBRARY_PAGE, label="Open the Library", icon=":material/folder_open:")
    st.stop()


def _ask_password(entry: LibraryEntry) -> Document:
    """A kept encrypted document: its password, asked in this session (stops until given)."""
    st.warning(f"{md(entry.name)} is kept encrypted: enter its password to open the citation.")
    with st.form(unlock_form(entry.sha256)):
        password = st.text_input("Password", type="password")
        if st.form_submit_button("Open", icon=":material/lock_open:"):
            try:
                doc = kept_docs.open_entry(entry, password)
                if doc is not None:
                    return doc
            except ChunkscopeError as exc:
                st.error(md(exc))
    st.stop()
    raise AssertionError("unreachable")


def resolve_document(doc_id: str, version: str) -> Document:
    """The document a link names: this session's, a sample, or the library's current version
    (``version``: that kept older version). Stops the page with a message otherwise."""
    if version:
        entry = kept_docs.old_version(doc_id, version)
        if entry is None:
            st.error(f"The version {md(version[:12])}… of {md(doc_id)} is no longer kept.")
        else:
            doc = kept_docs.open_entry(entry) if not entry.encrypted else _ask_password(entry)
            if doc is not None:
                st.info(
                    f"An older version of {md(doc_id)}: {md(entry.name)}, added "
                    f"{md(entry.added_at)}, kept in the library.",
                    icon=":material/history:",
                )
                return doc
    doc = session.library().get(doc_id)
    if doc is not None:
        if st.session_state[Key.DOC] != doc_id:  # Parse and Chunks open on it next
            session.select(doc_id)
        return doc
    locked = [e for e in kept_docs.locked_entries() if e.doc_id == doc_id]
    if locked:
        return _ask_password(locked[0])
    _unknown_document(doc_id)
    raise AssertionError("unreachable")


def earlier_versions(doc_id: str) -> list[str]:
    """sha256 of the versions of ``doc_id`` read before: in this session or kept."""
    library = kept_docs.kept_library()
    kept = [e.sha256 for e in library.history(doc_id)] if library else []
    return [*st.session_state[Key.PREVIOUS].get(doc_id, []), *kept[1:]]


def version_links(doc: Document, cited_sha: str, params: dict[str, str]) -> None:
    """Under a stale badge: a link to the cited version when its bytes are still kept;
    under an older version: a link back to the current one."""
    showing_old = bool(params.get("version"))
    if showing_old:
        current = {k: v for k, v in params.items() if k != "version"}
        st.page_link(cite_view.SOURCE_PAGE, label="Open the current version", query_params=current)
        return
    if not cited_sha or cited_sha == doc.sha256:
        return
    entry = kept_docs.old_version(doc.doc_id, cited_sha)
    if entry is None:
        st.caption("The bytes of the cited version are not kept, so it cannot be opened.")
        return
    st.page_link(
        cite_view.SOURCE_PAGE,
        label=f"Open the cited version ({md(entry.name)}, added {md(entry.added_at)})",
        icon=":material/history:",
        query_params={**params, "version": cited_sha},
    )


def span_picker(doc: Document) -> None:
    """A form that opens any span of ``doc``."""
    with st.form(SourceKey.SPAN_FORM):
        st.markdown(f"**Span of `{doc.doc_id}`** ({len(doc.text):,} chars)")
        cols = st.columns(2)
        start = cols[0].number_input("First char", 0, len(doc.text), 0)
        end = cols[1].number_input(
            "End char (exclusive)", 0, len(doc.text), min(200, len(doc.text))
        )
        if st.form_submit_button("Show span") and end > start:
            st.query_params.from_dict(source_params(Citation.of_span(doc, start, end)))
            st.rerun()


# -- the page and the text around a citation ------------------------------------------------


def reading_view(doc: Document, start: int, end: int, page: int, zoom: str) -> BBox | None:
    """The part of ``page`` to show (points; None: the whole page). "Cited lines" crops to
    the cited lines with a margin, at least half the page wide and a third as tall as wide,
    so the text is drawn near reading size; "Around them" is a full-width band."""
    if zoom == ZOOMS[2]:
        return None
    if zoom == ZOOMS[1]:
        return focus_view(doc, start, end, page)
    box = union_of(line.bbox_pt for line in span_line_boxes(doc, start, end, page=page))
    if box is None:
        return None
    info = doc.pages[page - 1]
    width = min(info.width_pt, max(box[2] - box[0] + 48.0, 0.5 * info.width_pt))
    left = min(max(0.0, (box[0] + box[2]) / 2 - width / 2), info.width_pt - width)
    height = min(info.height_pt, max(box[3] - box[1] + 72.0, width / 3))
    top = min(max(0.0, (box[1] + box[3]) / 2 - height / 2), info.height_pt - height)
    return (left, top, left + width, top + height)


def page_view(doc: Document, start: int, end: int, pages: tuple[int, ...]) -> None:
    """The cited page with one box per cited line, at the zoom picked."""
    shown = pages[0]
    if len(pages) > 1:
        shown = st.segmented_control(
            "Page", pages, default=pages[0], required=True, key=SourceKey.PAGE
        )
    zoom = st.segmented_control("Zoom", ZOOMS, default=ZOOMS[0], required=True, key=SourceKey.ZOOM)
    view = reading_view(doc, start, end, shown, zoom)
    shapes = highlight_shapes(doc, start, end, shown)
    cite_view.show_html(cite_view.page_figure(doc, shown, shapes, view_pt=view))
    st.caption(
        f"Page {shown}: {len(shapes)} line(s) highlighted, one box per line of the "
        "cited characters."
    )
    if read := scans.citation_line(doc, start, end):
        st.caption(f":material/document_scanner: The cited characters were {read}.")


_LINE_BREAK = re.compile(r"(?<=[^\n])\n(?=[^\n])")
SOFT_BREAK = '<span style="white-space:normal">\n</span>'


def reflowed(markup: str) -> str:
    """Escaped text markup with each single line break (a PDF's line end) set to wrap as a
    space; blank lines stay. The characters are untouched, so the text the page holds is
    still exactly the canonical slice (escaping never makes a line break)."""
    return _LINE_BREAK.sub(SOFT_BREAK, markup)


def context_view(doc: Document, start: int, end: int) -> None:
    """The cited characters lit in about 300 characters either side (a PDF's lines
    reflowed; other formats as written)."""
    a, b = context_window(doc, start, end, chars=300)
    markup = marked_text_html(doc.text[a:b], a, [highlight_mark(start, end)])
    cite_view.show_html(reflowed(markup) if doc.is_paged else markup)
