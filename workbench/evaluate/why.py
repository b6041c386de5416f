"""Glue of the failure reader's "why it failed" panel: the diagnosis of the failure on
screen (``core.diagnose``), led by its experiments (each repair tried and the rank it gave
the gold, the other methods' ranks: what decided the suggested cause), then every signal
under its cause with the characters it points at lit on the rendered page (paged
documents) and in the text around them, and the suggested cause the tag buttons
pre-select; and "where does a chunk rank?" for the
failure: the gold chunk, one found by its words or one clicked on its page, ranked at
full depth under every method of the run (``core.diagnose.run_depth``).

Document text reaches HTML only through ``core.render.markup``'s escaping builders.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

import streamlit as st

from core.diagnose.cause import COPY, RESTATED
from core.diagnose.repairs import Experiment
from core.diagnose.run_depth import RunRanker
from core.diagnose.run_failures import diagnose_run, suggest_run
from core.diagnose.signals import Diagnosis, Hit, Signal
from core.diagnose.track_record import record_of
from core.embed import Encoder
from core.evaluate import EvalRun, QueryRecord, save_run
from core.evaluate import triage as tri_core
from core.evaluate.run_file import Suggestion
from core.provenance.types import Block, Chunk, ChunkPolicy, Document
from core.render.chart_style import CAUSE_COLOURS
from core.render.markup import Mark, Shape, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.page_pick import PickTarget
from core.render.views import focus_view
from workbench.documents import parse_cache
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.frame import roles
from workbench.state import (
    EvalKey,
    WhyKey,
    amended_download_widget,
    attribution_widget,
    rank_on_widget,
    second_gold_widget,
    why_find_widget,
    why_found_widget,
)
from workbench.widgets import chunk_pick, cite_view, map_links
from workbench.widgets import full_depth as dep
from workbench.widgets.wording import md

CONTEXT_CHARS = 160  # shown around the first span a signal points at
CAUSE_ORDER = ("parse", "label", "method", "boundary", "vocabulary", "context")
RANK_EMBED = None  # the records of one stored method; None: core.index.indexer.method_records


@st.cache_resource(max_entries=8, show_spinner="Trying the repairs of each failure…")
def _diagnoses(
    run_id: str,
    methods: tuple[str, ...],
    method: str,
    shas: tuple[str, ...],
    _run: EvalRun,
    _docs: Mapping[str, Document],
) -> dict[str, Diagnosis]:
    """Keyed by the run's methods too: an imported run grows (our methods added to the
    same run id), and a failure of one method is read beside the others' ranks."""
    policy = ChunkPolicy.from_dict(dict(_run.policy))

    def parts(doc: Document) -> tuple[tuple[Block, ...], tuple[Chunk, ...]]:
        blocks = parse_cache.parsed(doc, "fast", quiet=True).blocks  # inside a cache
        return blocks, parse_cache.chunked(doc, "fast", policy, quiet=True)

    encoder: Encoder | None = eng.encoder()
    if getattr(encoder, "name", None) != _run.model:
        encoder = None  # another model's vectors rank nothing of this run: no repairs
    return diagnose_run(
        _run, _docs, method=method, chunker=parts, encoder=encoder, embed=RANK_EMBED
    )


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
    return cite_view.page_figure(doc, page, shapes, view_pt=focus_view(doc, a, b, page))


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


CONFIDENCE_NOTE = {
    "strong": "the evidence points one way",
    "weak": "the evidence leans this way",
    "unclear": "the evidence is split: read it before tagging",
}


def store_suggestions(run: EvalRun, docs: dict[str, Document]) -> EvalRun:
    """The run saved again with each failure's suggested cause and its experiments (as
    ``eval --out`` stores them), so the table, the tags and the export read them."""
    policy = ChunkPolicy.from_dict(dict(run.policy))

    def parts(doc: Document) -> tuple[Sequence[Block], Sequence[Chunk]]:
        return parse_cache.parsed(doc, "fast").blocks, parse_cache.chunked(doc, "fast", policy)

    with st.spinner("Trying the repairs of each failure…"):
        stored, found = suggest_run(run, docs, chunker=parts, encoder=eng.encoder(),
                                    embed=RANK_EMBED)  # fmt: skip
    save_run(stored, run_files.runs_dir() / f"{run.run_id}.json")
    keep_diagnoses(stored, docs, found)
    return stored


KEPT_DIAGNOSES = 16  # (run, method) entries kept for the reader


@st.cache_resource(show_spinner=False)
def _kept() -> dict[tuple[str, tuple[str, ...], str, tuple[str, ...]], dict[str, Diagnosis]]:
    """The diagnoses a run's suggestions were stored from, by run id, its methods, the
    method and its documents' hashes: the reader opens them without diagnosing again."""
    return {}


def _key(
    run: EvalRun, method: str, docs: Mapping[str, Document]
) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
    return (run.run_id, tuple(run.methods), method, tuple(sorted(d.sha256 for d in docs.values())))


def keep_diagnoses(
    run: EvalRun, docs: Mapping[str, Document], found: Mapping[str, dict[str, Diagnosis]]
) -> None:
    """Keep the diagnoses ``suggest_run`` made for ``run`` (its suggestions just stored) for
    the reader, where the reader would diagnose the same way (the workbench's model is the
    run's: the repairs ran with it): after a run of 40 failures with repairs, the first
    failure opens at once instead of after every failure of its method is diagnosed again
    (6.6 s on four filings here)."""
    if getattr(eng.encoder(), "name", None) != run.model:
        return
    kept = _kept()
    for method, diagnoses in found.items():
        kept[_key(run, method, docs)] = diagnoses
    while len(kept) > KEPT_DIAGNOSES:
        kept.pop(next(iter(kept)))


def _diagnosed(run: EvalRun, method: str, docs: dict[str, Document]) -> dict[str, Diagnosis]:
    key = _key(run, method, docs)
    found = _kept().get(key)
    if found is not None:
        return found
    return _diagnoses(run.run_id, run.methods, method, key[3], run, docs)


def diagnoses_of(run: EvalRun, method: str, docs: dict[str, Document]) -> dict[str, Diagnosis]:
    """Every failure of the run under ``method`` diagnosed (kept from when its suggestions
    were stored, else diagnosed and cached), by query id."""
    return _diagnosed(run, method, docs)


def diagnosis_of(
    run: EvalRun, query_id: str, method: str, docs: dict[str, Document]
) -> Diagnosis | None:
    """The diagnosis of one failure (every failure of the run is diagnosed once, kept)."""
    st.session_state[WhyKey.SEEN] = (run, docs)
    return _diagnosed(run, method, docs).get(query_id)


def _experiment_items(experiments: Sequence[Experiment]) -> str:
    """Each repair's line ("kept whole in one chunk: rank 14 → 2"), the ones that fix the
    failure marked, as list items."""
    return "".join(
        f"<li>{'✔ ' if e.fixes else ''}{escape(e.line)}"
        + (f' <span class="cs-doc">({escape(e.detail)})</span>' if e.detail else "")
        + "</li>"
        for e in experiments
    )


def experiments_html(diagnosis: Diagnosis) -> str:
    """The experiments as a list, the ones that fix the failure marked; a note when no
    repair could be run."""
    if not diagnosis.experiments:
        return '<div class="cs-doc">No experiment: the run stores no other method.</div>'
    items = _experiment_items(diagnosis.experiments)
    repaired = any(e.repair != "method" for e in diagnosis.experiments)
    note = "" if repaired else (
        '<div class="cs-doc">No repair of the gold applies: one chunk holds it whole (and '
        "it is not drowned there, or its paragraph is longer than a chunk or most of that "
        "chunk), the method reads its title and headings already (late chunking, a prefix) "
        "or it has none, and no OCR reading of it differs from its text (or none could be "
        "made).</div>"
        if diagnosis.repaired
        else '<div class="cs-doc">No repair of the gold was run (the run\'s model is not '
        "the one loaded here, or the method ranks no index of its own).</div>"
    )  # fmt: skip
    return f'<ul style="margin:0.3em 0 0 1em">{items}</ul>{note}'


def track_note(cause: str) -> str:
    """What a suggestion of ``cause`` has been worth: how often careful readers named it on
    failures no rule was written on (``core.diagnose.track_record``); empty for unclear."""
    record = record_of(cause)
    return f". Measured: {record.line()}" if record is not None else ""


def suggestion_html(
    title: str, cause: str, confidence: str, runner_up: str, note: str, body: str
) -> str:
    """The suggested cause in its colour with its confidence and runner-up, a note (what
    decided it), then ``body`` (the experiments)."""
    colour = CAUSE_COLOURS.get(cause, "#6c757d")
    runner = f" · runner-up: <b>{escape(runner_up)}</b>" if runner_up else ""
    return (
        f'<div class="cs-hit" style="border-left-color:{colour}"><b>Why it failed</b>{title} · '
        f'suggested: <b style="color:{colour}">{escape(cause)}</b> '
        f'({escape(confidence)}){runner} <span class="cs-doc">{escape(note)}</span>{body}</div>'
    )


def stored_html(stored: Suggestion) -> str:
    """The suggestion a run file stored for one failure, with the experiments it stored
    (none in runs made before the repairs)."""
    items = _experiment_items([Experiment.from_dict(e) for e in stored.experiments])
    tried = f'<ul style="margin:0.3em 0 0 1em">{items}</ul>' if items else (
        '<div class="cs-doc">The run stored no experiments (made before the repairs).</div>'
    )  # fmt: skip
    return suggestion_html(
        ", as stored with the run", stored.cause, stored.confidence, stored.runner_up,
        f"decided by: {stored.decided_by}{track_note(stored.cause)}", tried,
    )  # fmt: skip


def why_panel(
    diagnosis: Diagnosis | None, doc: Document | None, stored: Suggestion | None = None
) -> None:
    """The suggestion with its confidence and runner-up, the named findings (a method
    that alone misses, the answer in two places), then the evidence cause by cause, each
    signal with its strength. Without the document, the suggestion the run ``stored``
    (and its experiments), said to be read from the run file."""
    if diagnosis is None or doc is None:
        if stored is not None:
            st.html(stored_html(stored))
        st.caption(
            "The run's document is not loaded in this session: "
            + ("the suggestion above is the one stored with the run; its evidence on the "
               "page needs the document" if stored is not None else "no diagnosis")
            + " (`chunkscope open RUN.json --docs FILES` keeps a run's documents in the "
            "store's library)."
        )  # fmt: skip
        return
    note = f"{CONFIDENCE_NOTE.get(diagnosis.confidence, '')}; decided by: {diagnosis.decided_by}"
    note += track_note(diagnosis.suggested)
    st.html(
        suggestion_html(
            "",
            diagnosis.suggested,
            diagnosis.confidence,
            diagnosis.runner_up,
            note,
            experiments_html(diagnosis),
        )  # fmt: skip
    )
    _method_finding(diagnosis, doc)
    _second_gold(diagnosis, doc)
    st.caption("The signals below are shown for reading; the experiments above decide.")
    for cause in CAUSE_ORDER:
        signals = diagnosis.by_cause(cause)
        if not signals:
            continue
        holds = sum(s.holds for s in signals)
        title = f"{cause}: {holds} of {len(signals)} signal(s) hold"
        with st.expander(title, expanded=cause == diagnosis.suggested):
            for signal in signals:
                mark = "✔" if signal.holds else "–"
                st.markdown(
                    f"{mark} **{md(signal.name)}** ({signal.strength:.2f}): {md(signal.detail)}"
                )
                if signal.spans and signal.holds:
                    figure = _on_page(doc, signal)
                    if figure is not None:
                        cite_view.show_html(figure)
                    st.html(_snippet(doc, signal))


def _method_finding(diagnosis: Diagnosis, doc: Document) -> None:
    """Only this method misses: the gold chunk's late window and what pulled the chunk
    that displaced it (context attribution, computed on request)."""
    (signal,) = diagnosis.by_cause("method") or (None,)
    if signal is None or not signal.holds:
        return
    st.info(f"**Method-specific miss**: {signal.detail}", icon=":material/call_split:")
    from core import methods

    run, docs = st.session_state.get(WhyKey.SEEN, (None, {}))
    top = diagnosis.displacer
    attributed = (methods.embedding_method(windowed=True).name,
                  methods.embedding_method(prefixed=True).name)  # fmt: skip
    if diagnosis.method not in attributed:
        return  # only a window or a prefix moves a vector: nothing to attribute
    if run is None or top is None or docs.get(top.doc_id) is None:
        return
    key = attribution_widget(run.run_id, diagnosis.query_id, diagnosis.method)
    if not st.button(
        "What pulled the displacing chunk there?",
        key=key,
        help="Hides each sentence of its late window in turn (a few seconds)",
    ):
        return  # fmt: skip
    _attribution(run, diagnosis, docs, top)


def _attribution(run: EvalRun, diagnosis: Diagnosis, docs: dict[str, Document], top: Hit) -> None:
    from core import methods
    from core.diagnose.attribution import contextual_attribution, late_attribution

    policy = ChunkPolicy.from_dict(dict(run.policy))
    record = run.query(diagnosis.query_id)
    windowed = methods.embedding_method(windowed=True).name
    explain = late_attribution if diagnosis.method == windowed else contextual_attribution
    shown = [("the chunk that displaced the gold", docs[top.doc_id], top.chunk_id)]
    if diagnosis.gold_chunk and docs.get(record.doc_id) is not None:
        shown.append(("the gold chunk", docs[record.doc_id], diagnosis.gold_chunk))
    for what, owner, chunk_id in shown:
        chunks = parse_cache.chunked(owner, "fast", policy)
        chunk = next((c for c in chunks if c.chunk_id == chunk_id), None)
        if chunk is None:
            continue
        with st.spinner(f"Attributing {what}…"):
            found = explain(owner, chunk, record.query, eng.encoder())
        a, b = found.window
        st.markdown(
            f"**{md(what)}** ({md(owner.doc_id)}, chars {chunk.char_start:,}-"
            f"{chunk.char_end:,}): cosine {found.cosine:.3f}; its window chars {a:,}-{b:,}"
        )
        parts = sorted(found.parts, key=lambda p: -abs(p.delta))[:5]
        st.dataframe(
            [{"delta": round(p.delta, 4), "text": " ".join(p.text.split())[:160]} for p in parts],
            hide_index=True,
        )


def _second_gold(diagnosis: Diagnosis, doc: Document) -> None:
    """The answer in two places: the hit beside the gold, and a button that adds it to
    the query as a second gold span (the amended query set downloads below)."""
    hit = diagnosis.second_gold
    if hit is None:
        return
    run, _ = st.session_state.get(WhyKey.SEEN, (None, {}))
    found = diagnosis.evidence
    said_again = next(
        (s for s in diagnosis.signals if s.name == "gold said again in a top hit"), None
    )
    restated = (
        found is not None and found.restated_hit == hit.chunk_id and found.restated >= RESTATED
    )
    if found is not None and found.copy_hit == hit.chunk_id and found.copy >= COPY:
        holds = f"the gold's text ({found.copy:.0%} of its words, in order)"
    elif found is not None and restated:
        holds = f"a sentence that says what the gold says ({found.restated:.2f} under the model)"
    else:
        holds = "the gold's figures and the query's terms"
    st.warning(
        f"**Answer in two places**: a top hit holds {holds} "
        f"({md(hit.doc_id)}, chars {hit.char_start:,}-{hit.char_end:,}).",
        icon=":material/content_copy:",
    )
    if said_again is not None and restated:
        st.caption(md(said_again.detail))
    left, right = st.columns(2)
    record = run.query(diagnosis.query_id) if run is not None else None
    if record is not None:
        gold = record.gold[0]
        left.caption("The gold")
        left.html(f'<div class="cs-text">{escape(doc.text[gold.char_start : gold.char_end])}</div>')
    right.caption("The hit that answers too")
    right.html(f'<div class="cs-text">{escape(hit.text)}</div>')
    if run is None or record is None:
        return
    if hit.doc_id != record.doc_id:
        st.caption("It stands in another document: a query's gold lies in one document.")
        return
    amended = st.session_state.setdefault(WhyKey.AMENDED, {}).setdefault(run.run_id, {})
    clicked = st.button(
        "Mark it as a second gold span", key=second_gold_widget(run.run_id, record.id)
    )
    if clicked and roles.require_editor("amend the query set"):
        base = amended.get(record.id)
        line = tri_core.with_second_gold(run, record.id, hit.char_start, hit.char_end, hit.text)
        if base is not None:
            kept = tuple(dict.fromkeys((*base.gold, *line.gold)))
            line = dataclasses.replace(line, gold=kept)
        amended[record.id] = line
    if amended:
        lines = tri_core.amended_query_set(run, amended)
        body = "".join(json.dumps(q.to_dict(), ensure_ascii=False) + "\n" for q in lines)
        st.download_button(
            f"Download the query set with {len(amended)} query(ies) amended", body.encode(),
            f"{run.run_id}-amended.jsonl", "application/jsonl",
            key=amended_download_widget(run.run_id),
        )  # fmt: skip


@st.cache_resource(max_entries=2, show_spinner=False)
def _ranker(
    run_id: str,
    methods: tuple[str, ...],
    shas: tuple[str, ...],
    _run: EvalRun,
    _docs: dict[str, Document],
) -> RunRanker:
    """The run's corpus rebuilt (cheap: the chunks come from the chunk cache); its
    methods' chunk sides are computed by ``_prepared`` with a progress bar."""
    policy = ChunkPolicy.from_dict(dict(_run.policy))
    return RunRanker(
        _run, _docs, encoder=eng.encoder(), embed=RANK_EMBED, cache=eng.vector_cache(),
        chunker=lambda doc: parse_cache.chunked(doc, "fast", policy, quiet=True),
    )  # fmt: skip


def _prepared(run: EvalRun, docs: dict[str, Document]) -> RunRanker:
    shas = tuple(sorted(d.sha256 for d in docs.values()))
    ranker = _ranker(run.run_id, run.methods, shas, run, docs)  # a grown run: ranked again
    if not ranker.prepared:
        bar = st.progress(0.0, text="Scoring every chunk of the run…")

        def tick(done: int, total: int) -> None:
            bar.progress(
                done / max(total, 1), text=f"Vectors of the run's chunks: {done:,} of {total:,}"
            )

        ranker.prepare(tick)
        bar.empty()
    return ranker


def _target(
    record: QueryRecord, chunks: Sequence[Chunk], doc: Document, anchor: str
) -> tuple[Chunk, str]:
    """The chunk to rank: found by its words, clicked on its page, or the first gold one."""
    gold = next(
        (c for c in chunks
         if any(c.char_start < g.char_end and g.char_start < c.char_end for g in record.gold)),
        chunks[0],
    )  # fmt: skip
    words = st.text_input(
        "Find a chunk of this document by its words", key=why_find_widget(anchor),
        on_change=lambda: st.session_state.pop(WhyKey.CLICKED, None),
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
            f"{len(found)} chunk(s) found", list(labels), format_func=lambda c: labels[c],
            key=why_found_widget(anchor),
        )  # fmt: skip
        return next(c for c in found if c.chunk_id == picked), "the chunk found by its words"
    targets = [
        PickTarget(chunk_id=c.chunk_id, char_start=c.char_start, char_end=c.char_end,
                   label=" ".join(c.text.split())[:80])
        for c in chunks
    ]  # fmt: skip
    pages = doc.pages_of(gold.char_start, gold.char_end) if doc.is_paged else []
    chunk_pick.page_picker(
        doc, targets, key=WhyKey.PICK, state_key=WhyKey.CLICKED, anchor=anchor,
        first_page=pages[0] if pages else 1,
    )  # fmt: skip
    clicked = chunk_pick.picked(WhyKey.CLICKED, anchor)
    chosen = next((c for c in chunks if c.chunk_id == clicked), None)
    return (chosen, "the chunk clicked on the page") if chosen else (gold, "the first gold chunk")


def rank_panel(run: EvalRun, record: QueryRecord, docs: dict[str, Document]) -> None:
    """Any chunk of the failure's document ranked at full depth under every method of the
    run, over the run's own scope (all documents, or the query's own)."""
    with st.expander("Where does a chunk rank?", expanded=True, icon=":material/leaderboard:"):
        doc = docs.get(record.doc_id)
        if doc is not None and record.gold:
            st.page_link(
                "pages/map.py", label="Show on the map", icon=":material/scatter_plot:",
                query_params=map_links.map_params(
                    record.query, record.doc_id,
                    [(g.char_start, g.char_end) for g in record.gold], doc_sha256=doc.sha256,
                ),
                help="The query, its top hits and this gold among the indexed chunks.",
            )  # fmt: skip
        if doc is None or any(docs.get(d) is None for d in run.corpus):
            st.caption("Not every document of the run is loaded here: no full-depth ranks.")
            return
        made_here = run.run_id in st.session_state.get(EvalKey.RUN_DOCS, {})
        if not st.toggle(
            "Rank any chunk at full depth", value=made_here, key=rank_on_widget(run.run_id),
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
            f"{md(' '.join(target.text.split())[:100])}"
        )
        st.caption(
            "At full depth: " + " · ".join(f"{m} {r.label}" for m, r in ranks.items())
        )  # fmt: skip
        numbers = ("score", "rank 1", f"rank {run.text_k}", f"to enter the top {run.text_k}")
        st.dataframe(
            dep.rank_rows(ranks, run.text_k, run.method), hide_index=True,
            column_config={c: st.column_config.NumberColumn(format="%.4f") for c in numbers},
        )  # fmt: skip
