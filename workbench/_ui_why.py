"""Glue of the failure reader's "why it failed" panel: the diagnosis of the failure on
screen (``core.diagnose``), every signal under its cause with the characters it points at
lit on the rendered page (paged documents) and in the text around them, and the
suggested cause the tag buttons pre-select.

Document text reaches HTML only through ``core.render.markup``'s escaping builders.
"""

from __future__ import annotations

import streamlit as st

from core.diagnose.run import diagnose_run
from core.diagnose.signals import Diagnosis, Signal
from core.render.chart_style import CAUSE_COLOURS
from core.render.markup import Mark, Shape, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.views import focus_view
from core.types import Document
from workbench import _ui, _ui_cite, _ui_parse

CONTEXT_CHARS = 160  # shown around the first span a signal points at
CAUSE_ORDER = ("parse", "label", "boundary", "vocabulary", "context")


@st.cache_resource(max_entries=8, show_spinner="Laying out the evidence of each failure…")
def _diagnoses(run_id: str, method: str, shas: tuple[str, ...], _run, _docs) -> dict:
    from core.chunk import ChunkPolicy

    policy = ChunkPolicy.from_dict(dict(_run.policy))

    def parts(doc: Document):
        blocks = _ui_parse.parsed(doc, "fast").blocks
        return blocks, _ui_parse.chunked(doc, "fast", policy)

    return diagnose_run(_run, _docs, method=method, chunker=parts)


def diagnosis_of(run, query_id: str, method: str, docs: dict[str, Document]) -> Diagnosis | None:
    """The diagnosis of one failure (every failure of the run is diagnosed once, cached)."""
    shas = tuple(sorted(d.sha256 for d in docs.values()))
    return _diagnoses(run.run_id, method, shas, run, docs).get(query_id)


def _on_page(doc: Document, signal: Signal) -> str | None:
    """The page of the signal's first span with every span on it lit, zoomed to the
    lines around them; None for reflowable text or a span without glyphs."""
    if not doc.is_paged:
        return None
    a, b = signal.spans[0]
    pages = doc.pages_of(a, b)
    if not pages:
        return None
    page = pages[0]
    colour = CAUSE_COLOURS.get(signal.cause, "#f2b134")
    shapes = [
        Shape(bbox_pt=line.bbox_pt, fill=colour, fill_opacity=0.35,
              title=f"{signal.name}: chars {s}-{e}")
        for s, e in signal.spans
        for line in span_line_boxes(doc, s, e, page=page)
    ]  # fmt: skip
    if not shapes:
        return None
    return _ui_cite.page_figure(doc, page, shapes, view_pt=focus_view(doc, a, b, page))


def _snippet(doc: Document, signal: Signal) -> str:
    a, b = signal.spans[0]
    lo, hi = max(0, a - CONTEXT_CHARS), min(len(doc.text), b + CONTEXT_CHARS)
    colour = CAUSE_COLOURS.get(signal.cause, "#f2b134")
    marks = [
        Mark(char_start=max(lo, s), char_end=min(hi, e), css_class="cs-hl", colour=colour,
             title=f"{signal.name}: chars {s}-{e}")
        for s, e in sorted(signal.spans) if s < hi and e > lo
    ]  # fmt: skip
    clean, last = [], lo
    for mark in marks:  # marks may not overlap
        if mark.char_start >= last:
            clean.append(mark)
            last = mark.char_end
    return marked_text_html(doc.text[lo:hi], lo, clean)


def why_panel(diagnosis: Diagnosis | None, doc: Document | None) -> None:
    """The evidence, cause by cause, and the suggestion (confirmed by the tag buttons)."""
    if diagnosis is None or doc is None:
        st.caption("No diagnosis: the run's document is not loaded in this session.")
        return
    colour = CAUSE_COLOURS.get(diagnosis.suggested, "#6c757d")
    st.html(
        f'<div class="cs-hit" style="border-left-color:{colour}"><b>Why it failed</b> · '
        f'suggested: <b style="color:{colour}">{escape(diagnosis.suggested)}</b> '
        f'<span class="cs-doc">decided by: {escape(diagnosis.decided_by)}</span></div>'
    )
    for cause in CAUSE_ORDER:
        signals = diagnosis.by_cause(cause)
        holds = sum(s.holds for s in signals)
        title = f"{cause}: {holds} of {len(signals)} signal(s) hold"
        with st.expander(title, expanded=cause == diagnosis.suggested):
            for signal in signals:
                mark = "✔" if signal.holds else "–"
                st.markdown(f"{mark} **{_ui.md(signal.name)}**: {_ui.md(signal.detail)}")
                if signal.spans and signal.holds:
                    figure = _on_page(doc, signal)
                    if figure is not None:
                        _ui_cite.show_html(figure)
                    st.html(_snippet(doc, signal))
