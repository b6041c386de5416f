"""Source: one citation's exact characters, highlighted on the page and in the text.

Deep link: ``source?doc=<doc_id>&span=<start>-<end>`` (optionally ``&sha=<sha256>`` and
``&qh=<quote hash>``, which ``_ui_cite.citation_link`` always adds, so the view can verify;
``&version=<sha256>`` opens that kept older version instead of the current one). The
document comes from this session, the samples or the store's library, so a link opens in
any browser; an encrypted one asks for its password first.
"""

from __future__ import annotations

import streamlit as st

from core.provenance.cite import Citation
from core.render.links import check_link, link_url, parse_span
from core.render.markup import badge_html
from workbench import _ui, _ui_cite, _ui_frame, _ui_source

_ui_frame.entry("pages/source.py")

st.title("Source")
params = st.query_params
doc_id, raw_span = params.get("doc", ""), params.get("span", "")

if not doc_id:
    st.info(
        "Open a citation from any page (a selected block, a chunk, a search result) to "
        "see its exact characters here, or pick a span of the current document below."
    )
    _ui_source.span_picker(_ui.require_doc())
    st.stop()

doc = _ui_source.resolve_document(doc_id, params.get("version", ""))
span = parse_span(raw_span)
if span is None:
    st.error(
        f"This link's span {_ui.md(repr(raw_span))} is not two character offsets "
        "START-END with START ≤ END, so it cites nothing: pick the span below.",
        icon=":material/link_off:",
    )
    _ui_source.span_picker(doc)
    st.stop()

start, end = span
cited_sha = params.get("sha", "")
check = check_link(
    doc,
    start,
    end,
    sha=cited_sha,
    qh=params.get("qh", ""),
    previous_shas=_ui_source.earlier_versions(doc.doc_id),
)
_ui_cite.show_html(badge_html(check.headline, tone=check.tone, detail=check.detail))
_ui_source.version_links(doc, cited_sha, params.to_dict())
if end > len(doc.text):  # nothing to show: clamping the span would re-point the citation
    st.stop()
citation = Citation.of_span(doc, start, end)
st.markdown(f"`{citation.render()}` · {end - start:,} chars")

if doc.is_paged and citation.pages:  # the page the main area's whole width: text near reading
    left, right = st.container(), st.container()  # size; the context and the link below it
else:
    left, right = st.columns([3, 2], gap="medium")
with left:
    if not doc.is_paged:
        _ui_source.reflowable_view(doc, start, end)
    elif not citation.pages:
        st.warning("These characters have no box on any page (only inserted line breaks).")
    else:
        _ui_source.page_view(doc, start, end, citation.pages)
with right:
    st.markdown("**In context**")
    _ui_source.context_view(doc, start, end)
    st.markdown("**Share this citation**")
    base = (st.context.url or "").split("?")[0].rsplit("/", 1)[0]
    st.code(link_url(base, params.to_dict()), language=None, wrap_lines=True)
