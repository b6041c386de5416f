"""Ranked results as Compare, Evaluate and Map show them: ranked-chunk cards per method
and per rerank stage, chart clicks, and the inspected chunk on its page with its late
windows shaded.

Document text reaches HTML only through ``core.render.markup.escape`` and the escaping
builders of ``core.render``; Markdown goes through ``wording.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from core import methods as registry
from core.embed.records import LateWindow
from core.evaluate import EvalRun
from core.methods import MethodSpec
from core.provenance.cite import Citation, CitationStatus
from core.provenance.types import Block, ChunkPolicy, Document
from core.render.chart_style import WINDOW_COLOURS
from core.render.markup import Mark, Shape, badge_html, escape, marked_text_html
from core.render.overlay import span_line_boxes
from core.render.titles import ChunkTitle, HeadingIndex, chunk_titles, stored_title
from core.render.views import first_words, highlight_mark, highlight_shapes
from core.retrieve.comparison import Comparison, RankChange, hit_of
from core.retrieve.rerank import RerankResult
from core.store import ChunkStore, IndexedDoc, StoredHit
from workbench.documents import chunk_store, parse_cache, session
from workbench.engine import resources as eng
from workbench.widgets import cite_view
from workbench.widgets.wording import md

MAX_CARDS = 50  # cards per method column: more would make a page of thousands of cards
K_HELP = (
    f"Chunks kept per method. The columns show at most {MAX_CARDS} cards each; any k is "
    'accepted, and "Where does a chunk rank?" measures the gap to enter the top k.'
)


def score_text(method: str, score: float | None, spec: MethodSpec | None = None) -> str:
    """``cos 0.812`` / ``BM25 7.21`` / ``RRF 0.0325``: a score named by its scale (that of
    ``spec``, else of the registry's ``method``; a saved run's retriever is known to the
    run alone: pass ``run.method(m)``)."""
    scale = (spec or registry.get(method)).score
    shown = "-" if score is None else scale.format(score)
    return f"{scale.short} {shown}"


def cards_capped_line(k: int) -> str:
    """Why the columns show fewer cards than the ``k`` asked for."""
    return (
        f"k = {k:,}: each column shows its top {MAX_CARDS} cards. Ranks past {MAX_CARDS} "
        f'are in "Where does a chunk rank?" below, which ranks any chunk at full depth '
        f"and gives the gap to enter the top {k:,}."
    )


def card(
    rank: int,
    score: str,
    path: str | None,
    text: str | ChunkTitle,
    *,
    doc: str = "",
    note: str = "",
    extra: str = "",
    gold: bool = False,
) -> None:
    """One ranked chunk as escaped HTML: rank, score (already named, see ``score_text``),
    notes, its title line (``path``: a heading, None for none shown) and first words
    (``text``: shown as given when it is a ``ChunkTitle``, else its first 18 words)."""
    shown = escape(path) if path else "<i>no heading</i>" if path is not None else ""
    where = f'<span class="cs-doc">{escape(doc)}</span>' if doc else ""
    words = text.text if isinstance(text, ChunkTitle) else first_words(text, 18)
    st.html(
        f'<div class="cs-hit{" cs-gold" if gold else ""}"><b class="cs-rank">#{rank}</b>'
        f'<span class="cs-cos">{escape(score)}</span>{note}{where}'
        f'<div class="cs-path">{shown}</div>'
        f'<div class="cs-words">{escape(words)}</div>{extra}</div>'
    )


@dataclass(frozen=True, slots=True)
class _StoredSpan:
    chunk_id: str
    char_start: int
    char_end: int
    text: str


@st.cache_resource(max_entries=32, show_spinner=False)
def _doc_titles(
    doc_id: str, sha256: str, policy_key: str, where: str, state: str,
    _doc: Document, _blocks: Sequence[Block], _policy: ChunkPolicy, _store: ChunkStore,
) -> dict[str, ChunkTitle]:  # fmt: skip
    """Titles of every stored chunk of one document version under one policy (numbered
    among all of them, as the document has them)."""
    name = eng.encoder().name
    for method in registry.base_methods():
        recs = _store.scope_records(model=name, method=method, policy=_policy, doc_id=doc_id)
        if recs.ids:
            spans = [
                _StoredSpan(i, int(meta["char_start"]), int(meta["char_end"]), text)
                for i, meta, text in zip(recs.ids, recs.metadatas, recs.texts, strict=True)
                if meta.get("doc_sha256") == sha256
            ]
            return chunk_titles(spans, HeadingIndex.of(_doc.text, _blocks))
    return {}


def titles_of(
    hits: Sequence[StoredHit], policy: ChunkPolicy, entries: Iterable[IndexedDoc]
) -> dict[str, ChunkTitle]:
    """Card titles of ``hits`` by chunk id (``core.render.titles``): from the document's
    blocks when its indexed version is loaded, else from the stored heading path."""
    opened = chunk_store.store()
    found: dict[str, ChunkTitle] = {}
    for doc_id in sorted({h.doc_id for h in hits}):
        doc = session.library().get(doc_id)
        if (
            opened is None
            or doc is None
            or any(h.doc_sha256 != doc.sha256 for h in hits if h.doc_id == doc_id)
        ):
            continue
        blocks = parse_cache.parsed(doc, "fast").blocks
        key = (doc_id, doc.sha256, policy.key, opened.location.describe(), eng.index_state(entries))
        found |= _doc_titles(*key, doc, blocks, policy, opened)
    return {h.chunk_id: found.get(h.chunk_id) or stored_title(h.heading_path, h.text) for h in hits}


def evidence_line(hit: StoredHit) -> str:
    """What decided a hit beyond its score: the query words a lexical method matched, or
    each part's rank under a fusion (escaped HTML, ``""`` for dense hits)."""
    if hit.part_ranks:
        ranks = " · ".join(f"{p} #{'-' if r is None else r}" for p, r in hit.part_ranks)
        return f'<div class="cs-words">parts: {escape(ranks)}</div>'
    if registry.get(hit.method).family == "lexical":
        a = hit.char_start
        words = list(dict.fromkeys(hit.text[s - a : e - a].lower() for s, e in hit.matched))
        shown = ", ".join(words[:8]) + (" …" if len(words) > 8 else "") if words else "none"
        return f'<div class="cs-words">matched: <b>{escape(shown)}</b></div>'
    return ""


def short_link(citation: Citation, printed: Mapping[int, str] | None = None) -> None:
    """The citation link with a label short enough for a narrow column; ``printed``: the
    numbers the document's pages print on themselves ("p. 49 (printed 45)")."""
    pages = citation.render(printed).removeprefix(citation.doc_id + ", ")
    cite_view.citation_link(citation, label=pages)


def move_note(delta: int | None, against: str) -> str:
    """``▲3 vs naive`` (a negative delta moved up)."""
    if delta is None:
        return f'<span class="cs-up">new vs {escape(against)}</span> '
    if not delta:
        return ""
    cls, arrow = ("cs-up", "▲") if delta < 0 else ("cs-down", "▼")
    return f'<span class="{cls}">{arrow}{abs(delta)} vs {escape(against)}</span> '


@st.cache_resource(max_entries=16, show_spinner=False)
def _run_doc_titles(
    run_id: str, doc_id: str, sha256: str, _run: EvalRun, _doc: Document
) -> dict[str, ChunkTitle]:
    policy = ChunkPolicy.from_dict(dict(_run.policy))
    blocks = parse_cache.parsed(_doc, "fast", quiet=True).blocks  # drawn nothing: a cache
    chunks = parse_cache.chunked(_doc, "fast", policy, quiet=True)  # the run's ids
    return chunk_titles(chunks, HeadingIndex.of(_doc.text, blocks))


def run_titles(run: EvalRun, docs: dict[str, Document]) -> dict[str, ChunkTitle]:
    """Card titles (``core.render.titles``) of the run's chunks, by chunk id, in the
    documents loaded here as the run saw them."""
    found: dict[str, ChunkTitle] = {}
    for doc_id, doc in docs.items():
        if run.corpus.get(doc_id) == doc.sha256:
            found |= _run_doc_titles(run.run_id, doc_id, doc.sha256, run, doc)
    return found


def hit_card(
    hit: StoredHit, rank: int, whole_index: bool, title: ChunkTitle | None = None, *,
    note: str = "", extra: str = "",
) -> None:  # fmt: skip
    """A stored hit as a card titled by ``title`` (its heading and place, then its own
    first words; the document named when the scope is the whole index)."""
    doc = hit.doc_id if whole_index else ""
    title = title or stored_title(hit.heading_path, hit.text)
    shown = score_text(hit.method, hit.score)
    if hit.garbled:  # its offsets hold, its words do not: say so before anyone trusts it
        note += '<span class="cs-down" title="part of its text is not language">garbled</span> '
    extra = evidence_line(hit) + extra
    card(rank, shown, title.head, title, doc=doc, note=note, extra=extra)
    short_link(hit.citation)


def method_column(
    view: Comparison,
    method: str,
    changes: dict[str, RankChange],
    whole_index: bool,
    titles: dict[str, ChunkTitle],
) -> None:
    spec = registry.get(method)
    shown = method.replace(",", ",\u200b").replace(";", ";\u200b")  # a fusion wraps at its parts
    st.subheader(shown, divider="gray", help=f"{spec.summary}; scores: {spec.score.label}")
    st.caption(f"{view.scope_sizes[method]:,} chunks searched · {spec.score.label}")
    base = view.methods[0]
    for hit in view.results[method]:
        delta = changes[hit.chunk_id].deltas.get(method) if method != base else 0
        hit_card(hit, hit.rank, whole_index, titles.get(hit.chunk_id), note=move_note(delta, base))


def rerank_column(
    result: RerankResult, k: int, whole_index: bool, titles: dict[str, ChunkTitle]
) -> None:
    st.subheader(f"{result.method} + rerank", divider="violet")
    st.caption(f"{result.n_candidates:,} candidates reranked by visible features")
    for c in result.top(k):
        parts = " ".join(f"{n} {v:+.3f}" for n, v in c.contributions.items() if v)
        extra = f'<div class="cs-words">{escape(parts)} = {c.score:.3f}</div>'
        note = move_note(c.rank_change, "first stage")
        shown = f"rerank {c.score:.3f}"
        title = titles.get(c.chunk_id) or stored_title(c.hit.heading_path, c.hit.text)
        doc = c.hit.doc_id if whole_index else ""
        card(c.rank, shown, title.head, title, doc=doc, note=note, extra=extra)
        short_link(c.hit.citation)


def chunk_label(hit: StoredHit, whole_index: bool, title: ChunkTitle | None = None) -> str:
    """Short name of a chunk for pickers and charts: its title's one line (heading, first
    words, place), with the document named when the scope is the whole index."""
    label = (title or stored_title(hit.heading_path, hit.text)).label
    return f"{label} · {hit.doc_id}" if whole_index else label


def on_select(chart_key: str, state_key: str) -> None:
    """Chart click -> ``state_key`` (points carry chunk or query ids as customdata)."""
    points = st.session_state[chart_key].selection.points
    data = points[0].get("customdata") if points else None
    if data:
        st.session_state[state_key] = data[0] if isinstance(data, list) else data


def window_shapes(
    doc: Document, windows: Sequence[LateWindow], char_start: int, char_end: int, page: int
) -> list[Shape]:
    """The chunk's late windows shaded on ``page`` (what its tokens attended to) and the
    chunk itself highlighted on top."""
    shapes = [
        Shape(
            bbox_pt=line.bbox_pt, fill=WINDOW_COLOURS[n % 2], fill_opacity=0.14,
            title=f"late window {w.index + 1}: tokens {w.token_start}-{w.token_end}",
            css_class="cs-window",
        )
        for n, w in enumerate(windows)
        for line in span_line_boxes(doc, w.char_start, w.char_end, page=page)
    ]  # fmt: skip
    return shapes + highlight_shapes(doc, char_start, char_end, page)


def window_marks(windows: Sequence[LateWindow], char_start: int, char_end: int) -> list[Mark]:
    """Text marks: the windows' characters around the chunk, and the chunk highlighted."""
    lo = min((w.char_start for w in windows), default=char_start)
    hi = max((w.char_end for w in windows), default=char_end)
    marks = [
        Mark(char_start=a, char_end=b, css_class="cs-window", colour=WINDOW_COLOURS[0])
        for a, b in ((lo, char_start), (char_end, hi))
        if b > a
    ]
    return sorted([*marks, highlight_mark(char_start, char_end)], key=lambda m: m.char_start)


def chunk_inspector(
    wide: Comparison, hit: StoredHit, change: RankChange | None, reranked: RerankResult | None
) -> None:
    """The chunk on its page with its late windows shaded, and its score under each method.

    The stored offsets are drawn only on the very version that was indexed (the hit's
    citation verifies against the loaded document); otherwise a red badge says why and the
    stored text is shown instead."""
    pooled = [m for m in wide.methods if registry.get(m).needs_mean_pooling]
    late = next((h for m in pooled if (h := hit_of(wide, m, hit.chunk_id))), None)
    doc = session.library().get(hit.doc_id)
    status = hit.citation.verify(doc)
    left, right = st.columns([3, 2], gap="medium")
    with right:
        rows = [
            {
                "method": m,
                "rank": change.ranks[m],
                "score": change.scores[m],
                "score is": registry.get(m).score.label,
            }
            for m in wide.methods
            if change
        ]
        if reranked:
            found = next((c for c in reranked.chunks if c.chunk_id == hit.chunk_id), None)
            rows.append(  # a chunk that cannot reach the reranked top was not reranked
                {"method": f"{reranked.method}+rerank", "rank": found.rank if found else None,
                 "score": found.score if found else None}
            )  # fmt: skip
        st.dataframe(
            rows,
            hide_index=True,
            column_config={"score": st.column_config.NumberColumn(format="%.4f")},
        )
        cite_view.citation_link(hit.citation)
        if late is not None:
            used = ", ".join(str(w + 1) for w in late.windows)
            st.caption(
                f"Late vector: {late.context} context, {late.full_context_tokens} of "
                f"{late.token_count} tokens with full context, from window(s) {used}."
            )
    with left:
        if status is CitationStatus.MISSING or doc is None:  # verify(None) is MISSING
            st.info(f"{md(hit.doc_id)} is not loaded in this session: add it in the Library.")
        elif status is not CitationStatus.OK:
            cite_view.show_html(unverified_html(hit, doc, status))
        else:
            draw_on_document(doc, hit, late)


def unverified_html(hit: StoredHit, doc: Document, status: CitationStatus) -> str:
    """A red badge saying why the stored offsets are not drawn, then the stored text."""
    if status is CitationStatus.STALE:
        headline = f"Stale: the loaded {hit.doc_id} is not the indexed version"
        detail = (
            f"Indexed sha256 {hit.doc_sha256[:12]}…, loaded {doc.sha256[:12]}…: the stored "
            "offsets belong to the other bytes. Re-index the document to see the chunk on it."
        )
    else:
        headline = f"Mismatch: the stored offsets of {hit.doc_id} do not hold the stored text"
        detail = "Same document bytes, other characters at the span: re-index the document."
    stored = marked_text_html(hit.text, 0, [])
    return badge_html(headline, tone="bad", detail=detail) + stored


def draw_on_document(doc: Document, hit: StoredHit, late: StoredHit | None) -> None:
    """The verified chunk on its page (paged documents) or in its text, late windows shaded."""
    windows = [w for w in eng.windows_of(doc) if late is not None and w.index in late.windows]
    if doc.is_paged and hit.pages:
        shapes = window_shapes(doc, windows, hit.char_start, hit.char_end, hit.pages[0])
        cite_view.show_html(cite_view.page_figure(doc, hit.pages[0], shapes))
        st.caption(f"Page {hit.pages[0]}: the chunk in yellow, its late window(s) shaded.")
        return
    a = max(0, hit.char_start - 800, min((w.char_start for w in windows), default=0))
    b = min(len(doc.text), hit.char_end + 800)
    marks = window_marks(windows, hit.char_start, hit.char_end)
    cite_view.show_html(marked_text_html(doc.text[a:b], a, marks))
