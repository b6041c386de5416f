"""The Source page's views of reflowable formats that carry more than offsets: the turns
of a transcript with their times, and the raw bytes of an HTML file a citation came from.
The HTML is built (and escaped) by ``core.render.source_views``."""

from __future__ import annotations

import streamlit as st

from core.render.source_views import raw_source_html, transcript_html
from core.types import Document
from pages import _ui, _ui_cite


def reflowable_view(doc: Document, start: int, end: int) -> None:
    """The left column of the Source page for a document without pages."""
    if doc.cues:
        st.caption(
            f"{_ui.md(doc.doc_id)} is a transcript: no pages, so its provenance is character "
            "offsets and the times of the cues they touch. The cited turns, lit:"
        )
        _ui_cite.show_html(transcript_html(doc, start, end))
        return
    _ui_cite.no_pages_note(doc)
    found = doc.raw_range(start, end)
    if doc.char_raw_span is not None:
        where = f"bytes {found[0]:,}-{found[1]:,}" if found else "no bytes"
        st.markdown(f"**In the raw source** ({where} of the file, tags and references as written)")
        _ui_cite.show_html(raw_source_html(doc, start, end))
