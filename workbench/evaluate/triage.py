"""The failure reader of the Evaluate page: its state, the tags (``triage.sqlite`` beside
the index, ``core.evaluate.TriageStore``), button callbacks, exports, and the query card.

Query sets and saved runs, which other pages read too, are in ``workbench.engine.run_files``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from core.evaluate import (
    CAUSES,
    EvalRun,
    Failure,
    QueryRecord,
    Tag,
    TriageStore,
    export_tags,
    sample_failures,
    tag_query,
)
from core.evaluate.triage import tag_of_failure, tags_by_failure
from core.ingest.page_labels import printed_labels
from core.provenance.cite import Citation
from core.provenance.types import Document
from core.render.markup import escape, marked_text_html
from core.render.titles import stored_title
from core.render.views import context_window, focus_view, highlight_mark, highlight_shapes
from workbench.engine import run_files
from workbench.evaluate import why
from workbench.frame import roles
from workbench.state import EvalKey
from workbench.widgets import cite_view
from workbench.widgets import result_cards as ins
from workbench.widgets.wording import md

N_SAMPLE = 20  # failures drawn for the reader
SEEDS_SEARCHED = 10_000  # seeds tried to draw a sample holding a failure picked in the table


def triage_store() -> TriageStore:
    """Cause tags in ``triage.sqlite`` beside the index (restarts keep them); a viewer's
    reads the file without ever writing it."""
    if not roles.is_editor():
        return roles.ReadOnlyTriage(run_files.runs_dir().parent / "triage.sqlite")
    return TriageStore(run_files.runs_dir().parent / "triage.sqlite")


def tag_failure(
    run: EvalRun, failure: Failure, cause: str, note_key: str, size: int, suggested: str = ""
) -> None:
    """Button callback: tag (with the note and the suggestion shown), then move on."""
    if not roles.require_editor("tag failures"):
        return
    note = st.session_state.get(note_key, "")
    tag_query(
        triage_store(), run, failure.query_id, cause, note=note, method=failure.method,
        suggested=suggested,
    )  # fmt: skip
    step(1, size)


def step(by: int, size: int) -> None:
    st.session_state[EvalKey.TRIAGE_POS] = max(
        0, min((st.session_state[EvalKey.TRIAGE_POS] or 0) + by, size - 1)
    )


def own_tag(failure: Failure) -> Tag | None:
    """The failure's tag: one per failure and method (``TriageStore``), so a tag made
    while reading another method's failures of the same query is not this one."""
    return failure.tag


def sample_counts(sample: Sequence[Failure]) -> dict[str, int]:
    """Tags per cause among the failures of ``sample``, every cause present, in
    ``CAUSES`` order."""
    counts = dict.fromkeys(CAUSES, 0)
    for failure in sample:
        if (tag := own_tag(failure)) is not None:
            counts[tag.cause] += 1
    return counts


def chosen_cause(failure: Failure, suggested: str) -> str:
    """The one cause shown selected: this method's tag, else the suggestion ('' none)."""
    tag = own_tag(failure)
    return tag.cause if tag is not None else suggested


def elsewhere_line(failure: Failure, tags: Sequence[Tag]) -> str:
    """The same query's tags under other methods ("Under bm25: tagged vocabulary."),
    each its own reading of its own failure."""
    others = [
        t for t in tags
        if t.query_id == failure.query_id and t.doc_sha256 == failure.doc_sha256
        and t.method not in ("", failure.method)
    ]  # fmt: skip
    return "".join(f"Under {md(t.method)}: tagged **{t.cause}**. " for t in others)


def reset_triage() -> None:
    """Open the sample again at its first untagged failure."""
    st.session_state[EvalKey.TRIAGE_POS] = None


def position(sample: Sequence[Failure]) -> int:
    """Where the reader stands in ``sample``; a new session starts at the first untagged."""
    if st.session_state[EvalKey.TRIAGE_POS] is None:
        first = next((i for i, f in enumerate(sample) if own_tag(f) is None), 0)
        st.session_state[EvalKey.TRIAGE_POS] = first
    return min(st.session_state[EvalKey.TRIAGE_POS], len(sample) - 1)


def failure_rows(
    run: EvalRun, store: TriageStore, found: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, object]]:
    """Every failure of the run, one row per query and failing method: the query, the
    suggestion (the diagnosis in ``found``, ``{method: {query id: Diagnosis}}``, else the
    one the run stores) with its confidence, what decided it and its experiments, and the
    tag made under that method ('' none)."""
    tags = tags_by_failure(store.tags(run.run_id))
    rows: list[dict[str, object]] = []
    for record in run.queries:
        for method in run.methods:
            if not record.failed.get(method):
                continue
            made = (found or {}).get(method, {}).get(record.id)
            kept = record.suggested.get(method)
            if made is not None:
                cause, level, by = made.suggested, made.confidence, made.decided_by
                lines = [e.line for e in made.experiments]
            elif kept is not None:
                cause, level, by = kept.cause, kept.confidence, kept.decided_by
                lines = [str(e.get("line", "")) for e in kept.experiments]
            else:
                cause, level, by, lines = "", "", "", []
            tag = tag_of_failure(tags, record.id, record.doc_sha256, method)
            rows.append(
                {
                    "query": record.id,
                    "question": record.query,
                    "method": method,
                    "suggested": cause,
                    "confidence": level,
                    "decided by": by,
                    "experiments": " · ".join(lines),
                    "tag": tag.cause if tag is not None else "",
                }
            )
    return rows


def failure_table(run: EvalRun, docs: dict[str, Document]) -> None:
    """Every failure of the run as a table, filterable by method and suggested cause (each
    method's failures diagnosed once, on request: the repairs embed a few texts each)."""
    n = sum(bool(q.failed.get(m)) for q in run.queries for m in run.methods)
    if not st.toggle(
        f"Every failure of this run ({n})",
        key=f"{EvalKey.FAILS}on_{run.run_id}",
        help="A table of every failed query and method with its suggested cause and "
        "experiments (diagnoses each method's failures once)",
    ):
        return
    found = {m: why.diagnoses_of(run, m, docs) for m in run.methods}
    rows = failure_rows(run, triage_store(), found)
    with st.container(border=True):
        if not rows:
            st.caption("No failure.")
            return
        left, right = st.columns(2)
        methods = sorted({str(r["method"]) for r in rows})
        causes = sorted({str(r["suggested"]) for r in rows})
        picked = left.multiselect(
            "Method", methods, default=methods, key=f"{EvalKey.FAILS}method_{run.run_id}"
        )
        asked = right.multiselect(
            "Suggested", causes, default=causes, key=f"{EvalKey.FAILS}cause_{run.run_id}"
        )
        shown = [r for r in rows if r["method"] in picked and r["suggested"] in asked]
        key = f"{EvalKey.FAILS}table_{run.run_id}"
        keys = [(str(r["query"]), str(r["method"])) for r in shown]
        st.dataframe(
            shown, hide_index=True, width="stretch", key=key, selection_mode="single-row",
            on_select=lambda: open_row(run, keys, key),
        )  # fmt: skip
        st.caption(
            f"{len(shown)} of {len(rows)} failures; each method's suggestion and its "
            "experiments, and the tag made under that method. Pick a row to open it in "
            "the reader below."
        )


def reader_place(run: EvalRun, method: str, query_id: str, seed: int) -> tuple[int, int] | None:
    """``(seed, position)`` at which the reader shows the failure of ``query_id`` under
    ``method``: the current ``seed``'s sample when it holds it, else the first seed whose
    sample does (None when none of ``SEEDS_SEARCHED`` does)."""
    for tried in (seed, *range(SEEDS_SEARCHED)):
        sample = sample_failures(run, method, n=N_SAMPLE, seed=tried)
        for i, failure in enumerate(sample):
            if failure.query_id == query_id:
                return tried, i
    return None


def open_row(run: EvalRun, keys: Sequence[tuple[str, str]], key: str) -> None:
    """The failure table's selection callback: the reader turns to the picked row's
    method, and to a sample and position that show that failure."""
    rows = list(st.session_state[key]["selection"]["rows"])
    if not rows or rows[0] >= len(keys):
        return
    query_id, method = keys[rows[0]]
    place = reader_place(run, method, query_id, int(st.session_state[EvalKey.TRIAGE_SEED] or 0))
    if place is None:
        return
    st.session_state[EvalKey.TRIAGE_METHOD] = method
    st.session_state[EvalKey.TRIAGE_SEED], st.session_state[EvalKey.TRIAGE_POS] = place


def export_bytes(run: EvalRun, suffix: str) -> bytes:
    """The run's tags as ``core.evaluate.export_tags`` writes them (``.jsonl`` or ``.csv``)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"tags{suffix}"
        export_tags(triage_store(), run, path)
        return path.read_bytes()


def rank_text(
    rank: int | None, depth: int, record: QueryRecord | None = None, method: str = ""
) -> str:
    """``rank 912 of 84,000`` at full depth where the run recorded it, else the rank
    within the run's depth."""
    full = record.full_ranks.get(method) if record is not None else None
    if full is not None and record is not None and record.scope_size:
        return f"rank {full:,} of {record.scope_size:,}"
    return f"rank {rank}" if rank is not None else f"not in the top {depth}"


def run_rank_text(run: EvalRun, record: QueryRecord, method: str) -> str:
    """``rank_text`` for a method of ``run``: an imported log's retriever is never said to
    miss a top deeper than its log ("not in its log's 5 hits", not "not in the top 10")."""
    rank = record.ranks.get(method)
    info = run.imported or {}
    log_depth = info.get("depth")
    if (
        rank is None and method == info.get("method") and isinstance(log_depth, int)
        and record.full_ranks.get(method) is None and log_depth < run.depth
    ):  # fmt: skip
        return f"not in its log's {log_depth} hits"
    return rank_text(rank, run.depth, record, method)


def query_card(
    run: EvalRun, record: QueryRecord, docs: dict[str, Document], *, place: str = "reader"
) -> None:
    """A query: gold evidence on its page (or in its text), the top k of each method with
    gold-overlapping chunks marked, and where gold ranked when it missed the top k.
    ``place``: which card of the page it is (its widgets' keys)."""
    st.html(f'<div class="cs-query">{escape(record.query)}</div>')
    where = " · ".join(f"{m}: {run_rank_text(run, record, m)}" for m in record.ranks)
    st.caption(f"{md(record.id)} · document {md(record.doc_id)} · first gold chunk: {where}")
    if len(run.methods) <= 3:  # the gold beside the methods' top k
        left, right = st.columns([2, 3], gap="medium")
    else:  # many methods: the gold above, the methods' columns the page's whole width
        left, right = st.container(), st.container()
    with left:
        gold_view(record, docs.get(record.doc_id), place=place)
    titles = ins.run_titles(run, docs)
    several = len(run.corpus) > 1  # a card names its document only among several
    for col, m in zip(right.columns(len(run.methods)), run.methods, strict=True):
        col.markdown(f"**{m}** top {run.text_k}")
        with col:
            for hit, cite in run.hits(record.id, m)[: run.text_k]:
                gold = cite.doc_id == record.doc_id and any(
                    cite.char_start < g.char_end and g.char_start < cite.char_end
                    for g in record.gold
                )
                mark = '<span class="cs-up">gold</span> ' if gold else ""
                shown = ins.score_text(m, hit.score, run.method(m))
                title = titles.get(hit.chunk_id) or stored_title((), cite.quote)
                ins.card(
                    hit.rank, shown, title.head or None, title, note=mark, gold=gold,
                    doc=cite.doc_id if several else "",
                )  # fmt: skip
                held = docs.get(cite.doc_id)
                same = held is not None and held.sha256 == cite.doc_sha256
                ins.short_link(cite, printed_labels(held) if same and held else None)
        rank = record.ranks[m]
        if rank is None or rank > run.text_k:
            shown = run_rank_text(run, record, m)
            col.caption(f"Gold outside the top {run.text_k}: {shown}")


def gold_view(record: QueryRecord, doc: Document | None, *, place: str = "reader") -> None:
    """The first gold span highlighted on its page, or in its text for reflowable documents."""
    gold = record.gold[0]
    if doc is None or doc.sha256 != record.doc_sha256:
        st.caption("The labelled document is not loaded here; the gold text as labelled:")
        st.html(f'<div class="cs-text">{escape(gold.text or "")}</div>')
        return
    cite = Citation.of_span(doc, gold.char_start, gold.char_end)
    if doc.is_paged and cite.pages:
        page = cite.pages[0]
        view = focus_view(doc, gold.char_start, gold.char_end, page)
        shapes = highlight_shapes(doc, gold.char_start, gold.char_end, page)
        cite_view.show_html(cite_view.page_figure(doc, page, shapes, view_pt=view))
    else:
        a, b = context_window(doc, gold.char_start, gold.char_end, chars=300)
        mark = highlight_mark(gold.char_start, gold.char_end)
        cite_view.show_html(marked_text_html(doc.text[a:b], a, [mark]))
    more = f" (+{len(record.gold) - 1} more gold spans)" if len(record.gold) > 1 else ""
    where = cite.render(printed_labels(doc))  # "p. 49 (printed 46)": the filing's own number
    cite_view.citation_link(cite, label=f"Gold: {where}{more}")
    if doc.is_paged and cite.pages and st.button(
        "Read it large", key=f"cs-gold-large-{place}-{record.id}", icon=":material/zoom_in:",
        help="The gold's part of its page at the width of the window, and its text",
    ):  # fmt: skip
        _gold_large(doc, cite, cite.pages[0], f"Gold: {where}{more}")


@st.dialog("The gold on its page", width="large")
def _gold_large(doc: Document, cite: Citation, page: int, label: str) -> None:
    """The gold's part of its page, as wide as the window allows, with its text under it
    (a table's figures read at the size of the page)."""
    view = focus_view(doc, cite.char_start, cite.char_end, page)
    shapes = highlight_shapes(doc, cite.char_start, cite.char_end, page)
    cite_view.show_html(cite_view.page_figure(doc, page, shapes, view_pt=view))
    st.caption(label)
    st.html(f'<div class="cs-text">{escape(doc.text[cite.char_start : cite.char_end])}</div>')
