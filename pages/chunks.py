"""Chunks: tune a policy by eye; boundaries on the page, sizes against the model window."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence

import streamlit as st

from core import defaults
from core.chunk import policy_registry
from core.provenance.cite import Citation, clock_range
from core.provenance.types import Chunk, Document
from core.render.charts import chunk_size_figure
from core.render.export import EXPORT_SHAPES, export_jsonl
from core.render.markup import legend_html, marked_text_html
from core.render.overlay import CHUNK_COLOURS, OVERLAP_COLOUR
from core.render.views import chunk_marks, chunk_shapes
from workbench.documents import chunk_sets, parse_cache, session
from workbench.frame import sidebar
from workbench.state import (
    ChunksKey,
    Key,
    chunks_export_widget,
    chunks_part_widget,
    cite_widget,
    sizes_chart,
)
from workbench.widgets import cite_view, controls
from workbench.widgets.wording import md

sidebar.entry("pages/chunks.py")
# Policy A starts on the default policy, B on the first other one, so a pair differs.
SECOND_POLICY = next(n for n in policy_registry.policy_names() if n != defaults.POLICY)

doc = session.require_doc()
parser = st.session_state[Key.PARSER]
st.title("Chunks")
st.caption(
    f"**{md(doc.doc_id)}** cut by a chunking policy (blocks from the {parser} parser; "
    "change the parser on the Parse page). Moving a slider re-chunks; it never re-parses."
)
top = st.columns([1, 1, 2], vertical_alignment="bottom")
with top[0]:
    page = controls.page_number_input(doc) if doc.is_paged else 0
compare = top[1].toggle(
    "Compare two policies", key=ChunksKey.COMPARE, persist_state="session",
    help="Two policies side by side on a text; on a PDF one above the other, each page at a "
    "readable size",
)  # fmt: skip
# the page across the width, numbers below (two policies side by side stack anyway)
full = not compare and cite_view.full_width(doc, page, "chunks", top[2])
window = session.model_info_or_stop().text_tokens
parse_cache.parsed(doc, parser)  # the first parse shows its progress here, outside the fragment
cite_view.show_html(
    legend_html(
        [
            ("chunk", CHUNK_COLOURS[0]),
            ("next chunk", CHUNK_COLOURS[1]),
            ("overlap (underlined)", OVERLAP_COLOUR),
        ],
        underlined=["overlap (underlined)"],
    )
)


def text_view(doc: Document, chunks: Sequence[Chunk], slot: str) -> None:
    """The chunks of this page (or part of a text) one after another, boundaries marked."""
    if doc.is_paged:
        info = doc.pages[page - 1]
        here = [c for c in chunks if c.char_end > info.char_start and c.char_start < info.char_end]
        if not here:
            st.caption("No chunk holds text of this page.")
            return
        start, end = min(c.char_start for c in here), max(c.char_end for c in here)
    else:
        start, end = cite_view.text_window(doc, key=chunks_part_widget(slot, doc.doc_id))
    marks = chunk_marks(chunks, start, end)
    st.caption(f"Chars {start:,}-{end:,}: each chunk starts at its number; overlaps underlined.")
    cite_view.show_html(marked_text_html(doc.text[start:end], start, marks))


def cite_picker(chunks: Sequence[Chunk], slot: str, policy_key: str) -> None:
    """Pick a chunk (first one of this page by default) and open it in the Source view."""
    if not chunks:
        blank = not doc.text.strip()
        st.caption(
            "No chunks" + (": the document has no text (a scan needs OCR first)." if blank else ".")
        )
        return
    here = [i for i, c in enumerate(chunks) if page in c.pages] if doc.is_paged else [0]
    pick, link = st.columns([1, 3], vertical_alignment="bottom")
    number = pick.number_input(
        "Chunk", 1, len(chunks), (here or [0])[0] + 1, key=cite_widget(slot, policy_key, page)
    )
    with link:
        chunk = chunks[int(number) - 1]
        when = "" if chunk.start_s is None else f" ({clock_range(chunk.start_s, chunk.end_s)})"
        cite_view.citation_link(
            Citation.of_chunk(chunk), label=f"Open chunk {number}{when} in Source"
        )


def export_buttons(chunks: Sequence[Chunk], slot: str, policy_key: str) -> None:
    """Downloads of these chunks as LangChain / LlamaIndex JSONL (built on click only)."""
    labels = {"langchain": "LangChain JSONL", "llamaindex": "LlamaIndex JSONL"}
    for shape, column in zip(EXPORT_SHAPES, st.columns(len(EXPORT_SHAPES)), strict=True):
        column.download_button(
            labels[shape],
            functools.partial(export_jsonl, doc, list(chunks), shape),
            f"{doc.doc_id}.{policy_key}.{shape}.jsonl",
            "application/jsonl",
            key=chunks_export_widget(slot, shape),
            on_click="ignore",
            icon=":material/download:",
            help="Every chunk with its exact span and provenance in the metadata",
        )


def panel(slot: str, wide: bool) -> None:
    policy = controls.policy_controls(  # the second of a pair starts on another policy
        slot, horizontal=wide, first=defaults.POLICY if slot == "a" else SECOND_POLICY
    )
    beside = wide and not full
    view, numbers = st.columns([3, 2], gap="medium") if beside else (st.container(), st.container())
    chunks = parse_cache.chunked(doc, parser, policy)
    stats = parse_cache.stats_of(doc, parser, policy, window)
    chunk_sets.chunk_set_notes(doc, policy.name)  # an imported set: what it holds here
    chunk_sets.splitter_offer(policy.name, slot)  # ... and the splitter its rows name
    with numbers:
        st.markdown(f"**{policy.key}**")
        if chunks:  # a document without text has no numbers to show (the picker says so)
            controls.stats_metrics(stats, columns=2 if beside else 4)
            controls.idle_overlap_note(policy, stats.overlap_share)
            st.plotly_chart(
                chunk_size_figure(stats.token_counts, window, title="Chunk sizes (tokens)"),
                key=sizes_chart(slot),
                config={"displayModeBar": False},
            )
            export_buttons(chunks, slot, policy.key)
    with view:
        if doc.is_paged:
            shapes = chunk_shapes(doc, chunks, page)
            cite_view.show_html(cite_view.page_figure(doc, page, shapes))
            on_page = {i for s in shapes for i in s.data[0][1].split()}
            st.caption(
                f"Page {page}: {len(on_page)} chunks, each numbered in the margin beside the "
                "line where it starts (a tick marks its first character). Hover a box for its "
                "span and size."
            )
        else:
            cite_view.no_pages_note(doc)
            text_view(doc, chunks, slot)
        cite_picker(chunks, slot, policy.key)
    if doc.is_paged:
        with st.expander("Chunks as text"):
            text_view(doc, chunks, slot)


@st.fragment
def tuner() -> None:
    started = time.perf_counter()
    if compare and not doc.is_paged:  # text reflows: two policies read side by side
        for slot, column in zip("ab", st.columns(2, gap="large"), strict=True):
            with column:
                panel(slot, wide=False)
    elif compare:  # a page drawn in half the width shrinks its body text to ~7 px
        for slot in "ab":
            with st.container(border=True):
                panel(slot, wide=True)
    else:
        panel("a", wide=True)
    st.caption(f"Redrawn in {(time.perf_counter() - started) * 1000:.0f} ms.")


tuner()
