"""Parse: every block of a page drawn over it, coloured by kind, and listed beside it."""

from __future__ import annotations

from collections import Counter

import streamlit as st

from core.formats import PARSERS
from core.provenance.cite import Citation
from core.provenance.types import BLOCK_KINDS
from core.render.markup import legend_html, marked_text_html
from core.render.overlay import BLOCK_COLOURS
from core.render.views import HEADING_SEPARATOR, block_marks, block_shapes, first_words
from workbench.documents import parse_cache, session
from workbench.frame import roles, sidebar
from workbench.state import Key, kinds_widget, parse_part_widget, parse_table_widget
from workbench.widgets import cite_view, controls, wording
from workbench.widgets.wording import md

sidebar.entry("pages/parse.py")

doc = session.require_doc()
st.title("Parse")
st.caption(f"**{md(doc.doc_id)}**: how the parser cut it into typed blocks.")

row = st.columns([3, 1, 2], vertical_alignment="bottom")
parser = row[0].segmented_control(  # short labels: a long one was clipped at its edge
    "Parser",
    PARSERS,
    default=st.session_state[Key.PARSER],
    required=True,
    **wording.synced(Key.PARSER_WIDGET, Key.PARSER),
    format_func={"fast": "Fast (heuristic)", "layout": "Layout model",
                 "fast+layout": "Fast + layout"}.__getitem__,
    help="Fast: fonts, sizes, bullets and repetition. Layout model: PyMuPDF's layout model "
    "on every page (about half a second a page). Fast + layout: the fast parser, with the "
    "layout model only on the pages whose columns it left untyped.",
)  # fmt: skip
with row[1]:
    page = controls.page_number_input(doc) if doc.is_paged else 0
if parser != "fast" and roles.editing_enabled():  # a viewer starts no layout model run
    limit_s = parse_cache.layout_limit_s()
    # The widget's range holds any configured limit (the variable may set one outside it);
    # the limit in force changes only when the editor changes the number.
    st.number_input(
        "Layout model time limit (s)",
        min_value=1,
        max_value=3600,
        step=30,
        value=min(3600, max(1, round(limit_s))),
        help="The layout model stops past this many seconds on one document (about half a "
        "second a page), for this session; the default is CHUNKSCOPE_LAYOUT_TIMEOUT_S or 60.",
        **wording.synced(Key.LAYOUT_LIMIT_WIDGET, Key.LAYOUT_LIMIT_S),
    )
result = parse_cache.parsed(doc, parser)
row[2].caption(parse_cache.parse_times_line(doc))

blocks = result.blocks
counts: Counter[str] = Counter(b.kind for b in blocks)
present = [k for k in BLOCK_KINDS if counts[k]]
if not blocks:
    st.info("The parser found no text blocks (a scan without a text layer?).")
    st.stop()
kinds = st.pills(
    "Block kinds shown",
    present,
    selection_mode="multi",
    default=present,
    key=kinds_widget(doc.doc_id, parser),
    format_func=lambda k: f"{k} ({counts[k]})",
)
cite_view.show_html(legend_html([(k, BLOCK_COLOURS[k]) for k in present]))

shown = [b for b in blocks if b.kind in kinds and (not doc.is_paged or b.page == page)]
stacked = cite_view.full_width(doc, page, "parse")  # landscape always; portrait on request
left, right = (st.container(), st.container()) if stacked else st.columns([3, 2], gap="medium")
with left:
    if doc.is_paged:
        if page in doc.pages_without_text:
            st.warning(f"Page {page} has no text layer: nothing to parse on it.")
        shapes = block_shapes(doc, blocks, page, set(kinds))
        cite_view.show_html(cite_view.page_figure(doc, page, shapes))
        st.caption("Hover a box for its kind, heading path, span and first words.")
    else:
        cite_view.no_pages_note(doc)
        start, end = cite_view.text_window(doc, key=parse_part_widget(doc.doc_id))
        marks = block_marks(blocks, start, end, set(kinds))
        cite_view.show_html(marked_text_html(doc.text[start:end], start, marks))
        shown = [b for b in shown if b.char_end > start and b.char_start < end]
with right:
    where = f"page {page}" if doc.is_paged else "this part"
    st.markdown(f"**{len(shown)} blocks on {where}**")
    if garbled := sum(b.garbled for b in shown):
        st.warning(
            f"{garbled} block(s) here are garbled: their text is not language (unmapped or "
            "custom-encoded glyphs). Their offsets hold, but no method can match their words.",
            icon=":material/warning:",
        )
    table = st.dataframe(
        [
            {
                "kind": b.kind + (" · garbled" if b.garbled else ""),
                "span": f"{b.char_start}-{b.char_end}",
                "text": first_words(b.text, 16),
                "heading path": HEADING_SEPARATOR.join(b.heading_path),
            }
            for b in shown
        ],
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=parse_table_widget(doc.doc_id, page),
        height=min(40 + 35 * len(shown), 560),
        column_config={"text": st.column_config.TextColumn(width="large")},
    )
    if table.selection.rows:
        chosen = shown[table.selection.rows[0]]
        cite_view.citation_link(Citation.of_span(doc, chosen.char_start, chosen.char_end))
    else:
        st.caption("Select a row to open that block in the Source view.")
