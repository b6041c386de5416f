"""Glue of Compare's "what moved this vector?" panel: context attribution of the inspected
chunk for the typed query (``core.diagnose.attribution``), computed on demand with a
progress bar, drawn as a heat map over the page (or the text) and listed by influence.

Document text reaches HTML only through ``core.render.markup``'s escaping builders.
"""

from __future__ import annotations

import streamlit as st

from core.diagnose.attribution import Attribution, contextual_attribution, late_attribution
from core.provenance.types import Chunk, ChunkPolicy, Document
from core.render.markup import Mark, Shape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.views import highlight_shapes
from core.store import StoredHit
from workbench.engine import resources as eng
from workbench.state import AttributionKey
from workbench.widgets import cite_view

UP, DOWN = "#d1495b", "#2e86ab"  # raised the cosine / lowered it


def _chunk_of(hit: StoredHit, policy: ChunkPolicy) -> Chunk:
    return Chunk(
        chunk_id=hit.chunk_id, doc_id=hit.doc_id, doc_sha256=hit.doc_sha256,
        char_start=hit.char_start, char_end=hit.char_end, text=hit.text, pages=hit.pages,
        heading_path=hit.heading_path, block_kinds=hit.block_kinds,
        token_count=hit.token_count, policy=policy,
    )  # fmt: skip


def _compute(doc: Document, chunk: Chunk, query: str) -> tuple[Attribution, Attribution]:
    bar = st.progress(0.0, text="Hiding each sentence of the late window in turn…")

    def tick(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Late window: {done} of {total} passes")

    late = late_attribution(doc, chunk, query, eng.encoder(), progress=tick)
    bar.progress(0.0, text="Leaving out each word of the contextual prefix…")
    ctx = contextual_attribution(doc, chunk, query, eng.encoder())
    bar.empty()
    return late, ctx


def _weight(delta: float, peak: float) -> float:
    return min(0.65, 0.08 + 0.57 * abs(delta) / peak) if peak > 0 else 0.08


def _heat(doc: Document, late: Attribution, chunk: Chunk) -> None:
    peak = max((abs(p.delta) for p in late.parts), default=0.0)
    if doc.is_paged and chunk.pages:
        pages = sorted({pg for p in late.parts for pg in doc.pages_of(p.char_start, p.char_end)})
        for page in pages or [chunk.pages[0]]:
            shapes = [
                Shape(
                    bbox_pt=line.bbox_pt, fill=UP if p.delta > 0 else DOWN,
                    fill_opacity=_weight(p.delta, peak),
                    title=f"cosine {'+' if p.delta >= 0 else ''}{p.delta:.4f} when hidden away",
                )
                for p in late.parts
                for line in span_line_boxes(doc, p.char_start, p.char_end, page=page)
            ]  # fmt: skip
            if page in chunk.pages:
                shapes += highlight_shapes(doc, chunk.char_start, chunk.char_end, page)
            cite_view.show_html(cite_view.page_figure(doc, page, shapes))
            st.caption(
                f"Page {page}: red raised the chunk's cosine, blue lowered it; the chunk in yellow."
            )
        return
    a, b = late.window
    marks = [
        Mark(char_start=p.char_start, char_end=p.char_end, css_class="cs-attr",
             colour=UP if p.delta > 0 else DOWN, title=f"{p.delta:+.4f}")
        for p in sorted(late.parts, key=lambda p: p.char_start)
    ]  # fmt: skip
    cite_view.show_html(marked_text_html(doc.text[a:b], a, marks))


def attribution_panel(
    query: str, hit: StoredHit, policy: ChunkPolicy, doc: Document | None
) -> None:
    """The button, then the heat map and the most influential sentences and prefix words."""
    results = st.session_state.setdefault(AttributionKey.RESULTS, {})
    if doc is None or doc.sha256 != hit.doc_sha256 or eng.late_refusal():
        return
    key = (query, hit.chunk_id)
    with st.expander(
        "What moved this chunk's vectors? (context attribution)", icon=":material/insights:"
    ):
        st.caption(
            "Hides each sentence of the chunk's late window outside the chunk in turn, and each "
            "word of its contextual prefix, and measures how much the chunk's cosine to the "
            "query falls: what the vector owes to its context."
        )
        if st.button("Compute", key=AttributionKey.GO, icon=":material/play_arrow:"):
            results[key] = _compute(doc, _chunk_of(hit, policy), query)
        if key not in results:
            return
        late, ctx = results[key]
        st.markdown(
            f"Late cosine **{late.cosine:.4f}** with its whole window; contextual "
            f"**{ctx.cosine:.4f}** with its whole prefix."
        )
        _heat(doc, late, _chunk_of(hit, policy))
        top = sorted(late.parts, key=lambda p: -abs(p.delta))[:8]
        st.dataframe(
            [
                {"sentence": " ".join(p.text.split())[:120], "cosine lost when hidden": p.delta}
                for p in top
            ],
            hide_index=True,
        )
        words = sorted(ctx.parts, key=lambda p: -p.delta)
        st.dataframe(
            [{"prefix word": p.text, "cosine lost when left out": p.delta} for p in words],
            hide_index=True,
        )
