"""Glue that shows document text and citations: page figures, text windows, Source links.

- ``show_html``/``page_figure``: document text reaches HTML only through ``core.render``'s
  escaping builders;
- ``citation_link``: any citation opens the Source page at its span (the
  link's label goes through ``wording.md``, so a quote is shown as written).
"""

from __future__ import annotations

import html

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.errors import ChunkscopeError
from core.provenance.cite import Citation
from core.provenance.geometry import BBox
from core.provenance.types import Document
from core.render.links import source_params
from core.render.markup import Shape, page_html
from core.render.pages import DEFAULT_ZOOM, render_page_png
from workbench.state import Key, full_width_widget
from workbench.widgets import wording
from workbench.widgets.wording import md

SOURCE_PAGE = "pages/source.py"


def page_figure(
    doc: Document, page: int, shapes: list[Shape], *, view_pt: BBox | None = None
) -> str:
    """HTML of ``page`` rendered at 2x with ``shapes`` (escaped inside ``core.render.markup``)."""
    info = doc.pages[page - 1]
    try:
        png = render_page_png(doc, page, DEFAULT_ZOOM)
    except ChunkscopeError as exc:  # a page MuPDF cannot draw: its line, not a traceback
        return f'<p role="alert">page {page} cannot be drawn: {html.escape(str(exc))}</p>'
    return page_html(
        png,
        width_pt=info.width_pt,
        height_pt=info.height_pt,
        shapes=shapes,
        view_pt=view_pt,
        alt=f"page {page} of {doc.doc_id}",
    )


def is_landscape(doc: Document, page: int) -> bool:
    """Whether page ``page`` (1-based; 0 for reflowable text) is wider than tall: the
    pages draw it across the main area's full width, their lists below it."""
    if not doc.is_paged or not 1 <= page <= len(doc.pages):
        return False
    info = doc.pages[page - 1]
    return info.width_pt > info.height_pt


def full_width(doc: Document, page: int, where: str, slot: DeltaGenerator | None = None) -> bool:
    """Whether to draw page ``page`` across the main area's full width with its list below:
    a landscape page always; a portrait one when the reader turns the toggle on (one
    choice for Parse and Chunks, ``where`` names the page's widget; shown in ``slot``,
    else in place: a dense page's figure reads small beside the list)."""
    if not doc.is_paged:
        return False
    if is_landscape(doc, page):
        return True
    (slot if slot is not None else st).toggle(
        "Page at full width",
        value=bool(st.session_state[Key.FULL_WIDTH]),
        help="Draw the page across the whole width, its list below it (landscape pages "
        "always are).",
        **wording.synced(full_width_widget(where), Key.FULL_WIDTH),
    )
    return bool(st.session_state[Key.FULL_WIDTH])


def show_html(markup: str) -> None:
    """Show markup built by ``core.render`` (already escaped; scripts never run)."""
    st.html(markup)


def no_pages_note(doc: Document) -> None:
    st.info(
        f"{md(doc.doc_id)} is reflowable text: it has no pages, so its provenance is character "
        "offsets only. The text view below shows every span."
    )


def text_window(doc: Document, key: str, size: int = 6000) -> tuple[int, int]:
    """A ``[start, end)`` slice of a reflowable text to show, picked with a number input."""
    n_windows = max(1, -(-len(doc.text) // size))
    part = int(
        st.number_input(
            f"Part of the text (of {n_windows}, {size:,} chars each)", 1, n_windows, key=key
        )
    )
    return (part - 1) * size, min(len(doc.text), part * size)


def citation_link(citation: Citation, *, label: str | None = None) -> None:
    """A link that opens the Source view with ``citation``'s span highlighted."""
    st.page_link(
        SOURCE_PAGE,
        label=md(label or citation.render()),
        icon=":material/format_quote:",
        query_params=source_params(citation),
    )
