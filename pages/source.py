"""Source: one citation's exact characters, highlighted on the page and in the text.

Deep link: ``source?doc=<doc_id>&span=<start>-<end>`` (optionally ``&sha=<sha256>`` and
``&qh=<quote hash>``, which ``cite_view.citation_link`` always adds, so the view can verify;
``&version=<sha256>`` opens that kept older version instead of the current one). The
document comes from this session, the samples or the store's library, so a link opens in
any browser; an encrypted one asks for its password first.
"""

from __future__ import annotations

import streamlit as st

from core.provenance.cite import Citation
from core.render.links import check_link, link_url, parse_span
from core.render.markup import badge_html
from workbench.documents import session
from workbench.frame import sidebar
from workbench.source import source_views
from workbench.widgets import cite_view
from workbench.widgets.wording import md

sidebar.entry("pages/source.py")

st.title("Source")
params = st.query_params
doc_id, raw_span = params.get("doc", ""), params.get("span", "")

if not doc_id:
    st.info(
        "Open a citation from any page (a selected block, a chunk, a search result) to "
        "see its exact characters here, or pick a span of the current document below."
    )
    source_views.span_picker(session.require_doc())
    st.stop()

doc = source_views.resolve_document(doc_id, params.get("version", ""))
span = parse_span(raw_span)
if span is None:
    st.error(
        f"This link's span {md(repr(raw_span))} is not two character offsets "
        "START-END with START ≤ END, so it cites nothing: pick the span below.",
        icon=":material/link_off:",
    )
    source_views.span_picker(doc)
    st.stop()

start, end = span
cited_sha = params.get("sha", "")
check = check_link(
    doc,
    start,
    end,
    sha=cited_sha,
    qh=params.get("qh", ""),
    previous_shas=source_views.earlier_versions(doc.doc_id),
)
cite_view.show_html(badge_html(check.headline, tone=check.tone, detail=check.detail))
source_views.version_links(doc, cited_sha, params.to_dict())
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
        source_views.reflowable_view(doc, start, end)
    elif not citation.pages:
        st.warning("These characters have no box on any page (only inserted line breaks).")
    else:
        source_views.page_view(doc, start, end, citation.pages)
with right:
    st.markdown("**In context**")
    source_views.context_view(doc, start, end)
    st.markdown("**Share this citation**")
    base = (st.context.url or "").split("?")[0].rsplit("/", 1)[0]
    st.code(link_url(base, params.to_dict()), language=None, wrap_lines=True)
