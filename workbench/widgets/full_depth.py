"""The "where does it rank?" panel (Compare, Map, the failure reader): any chunk of the
scope (one from the ranked columns, one found by its words, or one clicked on its page)
with its exact rank under every method at full depth, and "mark as the answer", which
builds a labelled query set while exploring.

The marked set lives in the session (``DepthKey.MARKED``) as query-set lines (the JSONL
``eval`` reads); it downloads here and runs on the Evaluate page (its "Marked in Compare" source).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st

from core.diagnose.depth import FullRank, full_depth_ranks
from core.evaluate import GoldSpan, LabelledQuery
from core.methods import MethodSpec, get
from core.provenance.types import ChunkPolicy
from core.render.page_pick import PickTarget
from core.retrieve.comparison import Comparison
from core.store import ChunkStore, ScopeRecords, StoredHit
from workbench.documents import session
from workbench.engine import resources as eng
from workbench.state import DepthKey
from workbench.widgets import chunk_pick
from workbench.widgets.wording import md

MAX_FOUND = 30


def marked() -> list[LabelledQuery]:
    return st.session_state.setdefault(DepthKey.MARKED, [])


def _mark(query: str, hit: StoredHit) -> None:
    queries = marked()
    gold = GoldSpan(char_start=hit.char_start, char_end=hit.char_end, text=hit.text)
    entry = LabelledQuery(
        id=f"marked-{len(queries) + 1}", query=query, doc=hit.doc_id,
        doc_sha256=hit.doc_sha256, gold=(gold,),
    )  # fmt: skip
    if not any((q.query, q.doc, q.gold) == (entry.query, entry.doc, entry.gold) for q in queries):
        queries.append(entry)


def _find(records: ScopeRecords, words: str) -> list[int]:
    """Rows whose text holds every word of ``words`` (case-insensitive), in chunk order."""
    wanted = words.lower().split()
    return [i for i, text in enumerate(records.texts) if all(w in text.lower() for w in wanted)][
        :MAX_FOUND
    ]


def _found_label(records: ScopeRecords, row: int) -> str:
    meta = records.metadatas[row]
    words = " ".join(records.texts[row].split())[:80]
    return f"{meta['doc_id']} · chars {meta['char_start']}-{meta['char_end']} · {words}"


def rank_rows(
    ranks: dict[str, FullRank], k: int, spec_of: Callable[[str], MethodSpec] = get
) -> list[dict[str, str | float | None]]:
    """One row per method of a full-depth rank; ``spec_of`` names each score's scale (a
    saved run's: ``run.method``, which knows an imported retriever)."""
    rows = []
    for method, found in ranks.items():
        scale = spec_of(method).score
        rows.append({
            "method": method,
            "rank": found.label,
            "score": found.score,
            "rank 1": found.top_score,
            f"rank {k}": found.kth_score,
            f"to enter the top {k}": found.to_enter,
            "score is": scale.label,
        })  # fmt: skip
    return rows


def _forget_click() -> None:
    st.session_state.pop(DepthKey.CLICKED, None)


def _targets(records: ScopeRecords) -> list[PickTarget]:
    return [
        PickTarget(chunk_id=cid, char_start=int(m["char_start"]), char_end=int(m["char_end"]),
                   label=" ".join(text.split())[:80])
        for cid, m, text in zip(records.ids, records.metadatas, records.texts, strict=True)
    ]  # fmt: skip


def _clicked_target(hit: StoredHit, records: ScopeRecords) -> StoredHit | None:
    """The chunk clicked on the inspected chunk's page, drawn there; None if none is."""
    doc = session.library().get(hit.doc_id)
    with st.expander("Or click a chunk on its page", expanded=True, icon=":material/touch_app:"):
        if doc is None or doc.sha256 != hit.doc_sha256:
            st.caption("The indexed version of this document is not loaded: no page to click.")
            return None
        first = (hit.pages or (1,))[0] if doc.is_paged else 1
        chunk_pick.page_picker(
            doc, _targets(records), key=DepthKey.PICK, state_key=DepthKey.CLICKED,
            anchor=hit.chunk_id, first_page=first,
        )  # fmt: skip
    clicked = chunk_pick.picked(DepthKey.CLICKED, hit.chunk_id)
    if clicked is None or clicked not in records.ids:
        return None
    return records.hit(records.ids.index(clicked), score=0.0, rank=0)


def depth_panel(
    query: str,
    wide: Comparison,
    policy: ChunkPolicy,
    doc_id: str | None,
    k: int,
    hit: StoredHit,
    opened: ChunkStore,
) -> None:
    """The selected chunk (or one found by its words, or clicked on its page) ranked at
    full depth, and marking."""
    st.subheader("Where does a chunk rank?")
    st.caption(
        "Exact ranks at full depth under every method, counted over every chunk of the "
        "scope, for the chunk inspected above, any chunk found by its words, or one "
        "clicked on the inspected chunk's page."
    )
    words = st.text_input(
        "Find a chunk by its words", key=DepthKey.FIND, placeholder="e.g. warranty three years",
        on_change=_forget_click,
    )  # fmt: skip
    first = next(m for p in wide.methods for m in get(p).indexed_parts)
    target, how = hit, "the chunk inspected above"
    if words.strip():
        records = opened.scope_records(
            model=eng.encoder().name, method=first, policy=policy, doc_id=doc_id
        )
        rows = _find(records, words)
        if not rows:
            st.info("No chunk of this scope holds all those words.")
            return
        labels = {records.ids[i]: _found_label(records, i) for i in rows}
        picked = st.selectbox(
            f"{len(rows)} chunk(s) found",
            list(labels),
            format_func=lambda c: labels[c],
            key=DepthKey.FOUND,
        )
        row = records.ids.index(picked)
        target, how = records.hit(row, score=0.0, rank=0), "the chunk found by its words"
    else:
        records = opened.scope_records(
            model=eng.encoder().name, method=first, policy=policy, doc_id=hit.doc_id
        )
        clicked = _clicked_target(hit, records)
        if clicked is not None:
            target, how = clicked, "the chunk clicked on the page"
    st.caption(
        f"Ranked: {how}, {md(target.doc_id)} chars {target.char_start:,}-"
        f"{target.char_end:,}: {md(' '.join(target.text.split())[:100])}"
    )
    ranks = full_depth_ranks(
        query, target.chunk_id, methods=wide.methods, encoder=eng.encoder(), store=opened,
        policy=policy, doc_id=doc_id, k=k,
    )  # fmt: skip
    st.caption("At full depth: " + " · ".join(f"{m} {r.label}" for m, r in ranks.items()))
    numbers = ("score", "rank 1", f"rank {k}", f"to enter the top {k}")
    st.dataframe(
        rank_rows(ranks, k), hide_index=True,
        column_config={c: st.column_config.NumberColumn(format="%.4f") for c in numbers},
    )  # fmt: skip
    cells = st.columns([2, 2, 3])
    cells[0].button(
        "Mark as the answer", icon=":material/check_circle:", on_click=_mark, args=(query, target),
        help="Adds this query and the chunk's span to a labelled query set (the JSONL eval reads).",
    )  # fmt: skip
    if queries := marked():
        data = "".join(json.dumps(q.to_dict(), ensure_ascii=False) + "\n" for q in queries)
        cells[1].download_button(
            f"Download {len(queries)} marked", data, file_name="marked-queries.jsonl",
            mime="application/jsonl", icon=":material/download:",
        )  # fmt: skip
        cells[2].caption(
            f"{len(queries)} query(ies) marked: run them on the Evaluate page "
            "(source: Marked in Compare)."
        )
