"""Source: one citation's exact characters, highlighted on the page and in the text.

Deep link: ``source?doc=<doc_id>&span=<start>-<end>`` (optionally ``&sha=<sha256>`` and
``&qh=<quote hash>``, which ``_ui_cite.citation_link`` always adds, so the view can verify).
"""

from __future__ import annotations

import streamlit as st

from core.cite import Citation
from core.render.links import check_link, link_url, parse_span, source_params
from core.render.markup import badge_html, marked_text_html
from core.render.views import context_window, focus_view, highlight_mark, highlight_shapes
from pages import _ui, _ui_cite, _ui_frame, _ui_source

_ui_frame.entry("pages/source.py")

st.title("Source")
params = st.query_params
doc_id, raw_span = params.get("doc", ""), params.get("span", "")
span = parse_span(raw_span)

if not doc_id or span is None:
    if doc_id and raw_span:
        st.error(
            f"This link's span {_ui.md(repr(raw_span))} is not two character offsets "
            "START-END with START ≤ END, so it cites nothing: pick the span below.",
            icon=":material/link_off:",
        )
    else:
        st.info(
            "Open a citation from any page (a selected block, a chunk, a search result) to "
            "see its exact characters here, or pick a span of the current document below."
        )
    doc = _ui.library().get(doc_id) or _ui.require_doc()
    with st.form("cs_pick_span"):
        st.markdown(f"**Span of `{doc.doc_id}`** ({len(doc.text):,} chars)")
        cols = st.columns(2)
        start = cols[0].number_input("First char", 0, len(doc.text), 0)
        end = cols[1].number_input(
            "End char (exclusive)", 0, len(doc.text), min(200, len(doc.text))
        )
        if st.form_submit_button("Show span") and end > start:
            st.query_params.from_dict(source_params(Citation.of_span(doc, start, end)))
            st.rerun()
    st.stop()

doc = _ui.library().get(doc_id)
if doc is None:
    st.error(
        f"No document {_ui.md(repr(doc_id))} is loaded in this session: upload it on the "
        "Library page, then open the link again."
    )
    st.page_link(_ui.LIBRARY_PAGE, label="Open the Library", icon=":material/folder_open:")
    st.stop()

start, end = span
check = check_link(
    doc,
    start,
    end,
    sha=params.get("sha", ""),
    qh=params.get("qh", ""),
    previous_shas=st.session_state[_ui.Key.PREVIOUS].get(doc.doc_id, []),
)
_ui_cite.show_html(badge_html(check.headline, tone=check.tone, detail=check.detail))
if end > len(doc.text):  # nothing to show: clamping the span would re-point the citation
    st.stop()
citation = Citation.of_span(doc, start, end)
st.markdown(f"`{citation.render()}` · {end - start:,} chars")

left, right = st.columns([3, 2], gap="medium")
with left:
    if not doc.is_paged:
        _ui_source.reflowable_view(doc, start, end)
    elif not citation.pages:
        st.warning("These characters have no box on any page (only inserted line breaks).")
    else:
        shown = citation.pages[0]
        if len(citation.pages) > 1:
            shown = st.segmented_control(
                "Page", citation.pages, default=citation.pages[0], required=True, key="cs_src_page"
            )
        whole = st.toggle("Whole page", key="cs_src_whole")
        view = None if whole else focus_view(doc, start, end, shown)
        shapes = highlight_shapes(doc, start, end, shown)
        _ui_cite.show_html(_ui_cite.page_figure(doc, shown, shapes, view_pt=view))
        st.caption(
            f"Page {shown}: {len(shapes)} line(s) highlighted, one box per line of the "
            "cited characters."
        )
with right:
    st.markdown("**In context**")
    a, b = context_window(doc, start, end, chars=300)
    _ui_cite.show_html(marked_text_html(doc.text[a:b], a, [highlight_mark(start, end)]))
    st.markdown("**Share this citation**")
    base = (st.context.url or "").split("?")[0].rsplit("/", 1)[0]
    link = link_url(base, params.to_dict())
    st.code(link, language=None, wrap_lines=True)
