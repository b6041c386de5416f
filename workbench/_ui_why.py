"""Glue of the failure reader's "why it failed" panel: the diagnosis of the failure on
screen (``core.diagnose``), every signal under its cause with the characters it points at
lit on the rendered page (paged documents) and in the text around them, and the
suggested cause the tag buttons pre-select; and "where does a chunk rank?" for the
failure: the gold chunk, one found by its words or one clicked on its page, ranked at
full depth under every method of the run (``core.diagnose.run_depth``).

Document text reaches HTML only through ``core.render.markup``'s escaping builders.
"""

from __future__ import annotations

import streamlit as st

from core.diagnose.run_depth import RunRanker
from core.diagnose.run_failures import diagnose_run
from core.diagnose.signals import Diagnosis, Signal
from core.render.chart_style import CAUSE_COLOURS
from core.render.markup import Mark, Shape, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.page_pick import PickTarget
from core.render.views import focus_view
from core.types import ChunkPolicy, Document
from workbench import _ui, _ui_cite, _ui_parse, _ui_pick
from workbench import _ui_depth as dep
from workbench import _ui_engine as eng
from workbench import _ui_triage as tri

CONTEXT_CHARS = 160  # shown around the first span a signal points at
CAUSE_ORDER = ("parse", "label", "boundary", "vocabulary", "context")
CLICKED = "cs_why_clicked"  # (run id:query id, chunk_id clicked on the page)
FIND = "cs_why_find"  # words to find a chunk of the failure's document by
RANK_ON = "cs_why_rank"  # toggle: rank any chunk (re-embeds a run made in another process)
RANK_EMBED = None  # the records of one stored method; None: core.index.method_records


@st.cache_resource(max_entries=8, show_spinner="Laying out the evidence of each failure…")
def _diagnoses(run_id: str, method: str, shas: tuple[str, ...], _run, _docs) -> dict:
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


@st.cache_resource(max_entries=2, show_spinner=False)
def _ranker(run_id: str, shas: tuple[str, ...], _run, _docs) -> RunRanker:
    """The run's corpus rebuilt (cheap: the chunks come from the chunk cache); its
    methods' chunk sides are computed by ``_prepared`` with a progress bar."""
    policy = ChunkPolicy.from_dict(dict(_run.policy))
    return RunRanker(
        _run, _docs, encoder=eng.encoder(), embed=RANK_EMBED, cache=eng.vector_cache(),
        chunker=lambda doc: _ui_parse.chunked(doc, "fast", policy),
    )  # fmt: skip


def _prepared(run, docs: dict[str, Document]) -> RunRanker:
    ranker = _ranker(run.run_id, tuple(sorted(d.sha256 for d in docs.values())), run, docs)
    if not ranker.prepared:
        bar = st.progress(0.0, text="Scoring every chunk of the run…")
        ranker.prepare(
            lambda done, total: bar.progress(
                done / max(total, 1), text=f"Vectors of the run's chunks: {done:,} of {total:,}"
            )
        )
        bar.empty()
    return ranker


def _target(record, chunks, doc: Document, anchor: str) -> tuple[object, str]:
    """The chunk to rank: found by its words, clicked on its page, or the first gold one."""
    gold = next(
        (c for c in chunks
         if any(c.char_start < g.char_end and g.char_start < c.char_end for g in record.gold)),
        chunks[0],
    )  # fmt: skip
    words = st.text_input(
        "Find a chunk of this document by its words", key=f"{FIND}_{anchor}",
        on_change=lambda: st.session_state.pop(CLICKED, None),
    )  # fmt: skip
    if wanted := words.lower().split():
        found = [c for c in chunks if all(w in c.text.lower() for w in wanted)][: dep.MAX_FOUND]
        if not found:
            st.info("No chunk of this document holds all those words.")
            return gold, "the first gold chunk"
        labels = {
            c.chunk_id: f"chars {c.char_start}-{c.char_end} · {' '.join(c.text.split())[:80]}"
            for c in found
        }
        picked = st.selectbox(
            f"{len(found)} chunk(s) found", list(labels), format_func=labels.get,
            key=f"cs_why_found_{anchor}",
        )  # fmt: skip
        return next(c for c in found if c.chunk_id == picked), "the chunk found by its words"
    targets = [
        PickTarget(chunk_id=c.chunk_id, char_start=c.char_start, char_end=c.char_end,
                   label=" ".join(c.text.split())[:80])
        for c in chunks
    ]  # fmt: skip
    pages = doc.pages_of(gold.char_start, gold.char_end) if doc.is_paged else []
    _ui_pick.page_picker(
        doc, targets, key="cs_why_pick", state_key=CLICKED, anchor=anchor,
        first_page=pages[0] if pages else 1,
    )  # fmt: skip
    clicked = _ui_pick.picked(CLICKED, anchor)
    chosen = next((c for c in chunks if c.chunk_id == clicked), None)
    return (chosen, "the chunk clicked on the page") if chosen else (gold, "the first gold chunk")


def rank_panel(run, record, docs: dict[str, Document]) -> None:
    """Any chunk of the failure's document ranked at full depth under every method of the
    run, over the run's own scope (all documents, or the query's own)."""
    with st.expander("Where does a chunk rank?", expanded=True, icon=":material/leaderboard:"):
        doc = docs.get(record.doc_id)
        if doc is None or any(docs.get(d) is None for d in run.corpus):
            st.caption("Not every document of the run is loaded here: no full-depth ranks.")
            return
        made_here = run.run_id in st.session_state.get(tri.TKey.RUN_DOCS, {})
        if not st.toggle(
            "Rank any chunk at full depth", value=made_here, key=f"{RANK_ON}_{run.run_id}",
            help="Scores every chunk of the run for this query; a run made in an earlier "
            "process embeds its chunks again first.",
        ):  # fmt: skip
            return
        ranker = _prepared(run, docs)
        chunks = ranker.chunks_of(record.doc_id)
        if not chunks:
            st.caption("The document has no chunks under the run's policy.")
            return
        target, how = _target(record, chunks, doc, f"{run.run_id}:{record.id}")
        ranks = ranker.full_depth(record.query, record.doc_id, target.chunk_id)
        st.caption(
            f"Ranked: {how}, chars {target.char_start:,}-{target.char_end:,}: "
            f"{_ui.md(' '.join(target.text.split())[:100])}"
        )
        st.caption(
            "At full depth: " + " · ".join(f"{m} {r.label}" for m, r in ranks.items())
        )  # fmt: skip
        numbers = ("score", "rank 1", f"rank {run.text_k}", f"to enter the top {run.text_k}")
        st.dataframe(
            dep.rank_rows(ranks, run.text_k), hide_index=True,
            column_config={c: st.column_config.NumberColumn(format="%.4f") for c in numbers},
        )  # fmt: skip
