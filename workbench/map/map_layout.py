"""Glue of the Map page: the scope read and laid out (cached), UMAP fitted in the
background while PCA is drawn, the colour groupings, the link that opens the map on a
query and its gold, and the picked chunk.

Link: ``map?q=<query>&doc=<doc_id>&gold=<start>-<end>[,<start>-<end>…]&sha=<sha256>``
(``map_link``): the map opens on that query with those gold spans marked (the failure
reader's "show on the map"). The page keeps Compare's policy, scope, methods, query and
k (the same session keys), so either page opens on what the other showed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import streamlit as st

from core.diagnose.depth import full_depth_ranks
from core.errors import ChunkscopeError
from core.evaluate import EvalRun
from core.projection import MapScope, group_cohesion, layout, read_scope
from core.projection.cohesion import gold_chunks
from core.projection.fit import is_fitted
from core.provenance.cite import CitationStatus
from core.provenance.types import ChunkPolicy
from core.render.links import parse_span
from core.render.map_chart import OTHER, STATUS_COLOURS
from core.render.titles import stored_title
from core.store import ChunkStore, IndexedDoc, StoredHit
from workbench.documents import chunk_store, session
from workbench.engine import resources as eng
from workbench.state import EngineKey, MapKey
from workbench.widgets import cite_view
from workbench.widgets import full_depth as dep
from workbench.widgets import result_cards as ins
from workbench.widgets.wording import md

COLOURINGS = {"document": "Document", "heading": "Heading", "run": "A run's gold: failed or found"}


_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunkscope-umap")


_PENDING: dict[tuple, Future] = {}


_LOCK = threading.Lock()


def init_state() -> None:
    defaults = {
        MapKey.KIND: "pca",
        MapKey.COLOUR: "document",
        MapKey.PICKED: None,
        MapKey.GOLD: None,
    }
    for key, default in defaults.items():
        st.session_state.setdefault(key, default)


def take_link() -> None:
    """Apply ``?q=…&gold=…`` once: the query, the gold spans, nothing picked yet."""
    params = st.query_params
    query, raw = params.get("q", ""), params.get("gold", "")
    link = (query, params.get("doc", ""), raw, params.get("sha", ""))
    if not query or st.session_state.get(MapKey.LINKED) == link:
        return
    st.session_state[MapKey.LINKED] = link
    st.session_state[EngineKey.QUERY] = query
    for widget in (MapKey.QUERY_WIDGET, EngineKey.QUERY_WIDGET):  # the boxes show the new query
        st.session_state.pop(widget, None)
    spans = tuple(s for s in (parse_span(p) for p in raw.split(",") if p) if s is not None)
    st.session_state[MapKey.GOLD] = (link[1], link[3] or None, spans) if link[1] and spans else None
    st.session_state[MapKey.PICKED] = None


@st.cache_resource(max_entries=6, show_spinner="Reading the chunks' vectors…")
def _scope(
    where: str, state: str, model: str, methods: tuple[str, ...], policy_key: str,
    doc_id: str | None, keep: tuple[str, ...], _policy: ChunkPolicy, _store: ChunkStore,
) -> MapScope:  # fmt: skip
    return read_scope(
        _store, model=model, methods=methods, policy=_policy, doc_id=doc_id, keep=keep
    )


def scope(
    methods: Sequence[str],
    policy: ChunkPolicy,
    doc_id: str | None,
    entries: Iterable[IndexedDoc],
    keep: Sequence[str],
) -> MapScope:
    """The drawn chunks: read once per index state; read again with ``keep`` only when
    the scope is sampled and the sample missed some of them."""
    opened = chunk_store.existing_store()
    key = (opened.location.describe(), eng.index_state(entries), eng.encoder().name)
    base = _scope(*key, tuple(methods), policy.key, doc_id, (), policy, opened)
    if not base.sampled or all(c in base.row_of for c in keep):
        return base
    return _scope(*key, tuple(methods), policy.key, doc_id, tuple(keep), policy, opened)


def umap_state(drawn: MapScope) -> str:
    """``ready`` (fitted, in memory), ``running`` (fitting in the background) or
    ``failed: <why>``; starts the fit when none runs for this scope."""
    if is_fitted(drawn, "umap"):
        return "ready"
    key = (drawn.version, drawn.methods, drawn.doc_id, drawn.policy_key, len(drawn.chunks))
    with _LOCK:
        job = _PENDING.get(key)
        if job is None or (job.done() and job.exception() is None and not is_fitted(drawn, "umap")):
            job = _PENDING[key] = _POOL.submit(layout, drawn, "umap")
    if not job.done():
        return "running"
    error = job.exception()
    return "ready" if error is None else f"failed: {error}"


@st.fragment(run_every=1.5)
def wait_for_umap(drawn: MapScope) -> None:
    """Polls the background fit; reruns the page once UMAP is ready."""
    state = umap_state(drawn)
    if state == "running":
        st.caption(f"UMAP is computing for {len(drawn.chunks) * len(drawn.methods):,} points…")
    else:
        st.rerun(scope="app")


def groups(drawn: MapScope, colouring: str, status: dict[str, str] | None = None) -> list[str]:
    """One colour group per drawn chunk: its document, its top heading, or its run status."""
    if colouring == "heading":
        whole = len({c.doc_id for c in drawn.chunks}) > 1
        out = []
        for c in drawn.chunks:
            head = c.heading_path[0] if c.heading_path else "(no heading)"
            out.append(f"{c.doc_id} › {head}" if whole else head)
        return out
    if colouring == "run":
        found = status or {}
        return [found.get(c.chunk_id, OTHER) for c in drawn.chunks]
    return [c.doc_id for c in drawn.chunks]


def run_status(drawn: MapScope, run: EvalRun, method: str) -> dict[str, str]:
    """``{chunk_id: "gold, failed" | "gold, found"}`` for the drawn chunks holding a
    gold span of a query of ``run`` (failed wins when several queries share a chunk)."""
    out: dict[str, str] = {}
    for record in run.queries:
        if method not in record.failed:
            continue
        spans = [(g.char_start, g.char_end) for g in record.gold]
        label = "gold, failed" if record.failed[method] else "gold, found"
        for cid in gold_chunks(drawn, record.doc_id, record.doc_sha256 or None, spans):
            if out.get(cid) != "gold, failed":
                out[cid] = label
    return out


STATUS = STATUS_COLOURS


def hover_lines(drawn: MapScope) -> list[str]:
    """Each chunk's hover: its document and place, its title's heading, its first words."""
    out = []
    for c in drawn.chunks:
        title = stored_title(c.heading_path, c.text, n_words=14)
        pages = f" · p. {c.pages[0]}" if c.pages else ""
        words = title.words + (" …" if title.more else "")
        out.append(f"{c.doc_id}{pages} · chars {c.char_start:,}-{c.char_end:,}\n"
                   f"{title.heading or '(no heading)'}\n{words}")  # fmt: skip
    return out


def gold_ids(drawn_or_none: MapScope | None) -> list[str]:
    """The drawn chunks overlapping the linked gold spans."""
    gold = st.session_state.get(MapKey.GOLD)
    if not gold or drawn_or_none is None:
        return []
    doc_id, sha, spans = gold
    return gold_chunks(drawn_or_none, doc_id, sha, spans)


def linked_gold_ids(
    entries: Iterable[IndexedDoc], policy: ChunkPolicy, methods: Sequence[str]
) -> list[str]:
    """Ids of the stored chunks overlapping the linked gold spans (read before the
    scope, so a sample keeps them)."""
    gold = st.session_state.get(MapKey.GOLD)
    if not gold:
        return []
    doc_id, sha, spans = gold
    try:
        drawn = scope(methods, policy, doc_id, entries, ())
    except ChunkscopeError:
        return []
    return gold_chunks(drawn, doc_id, sha, spans)


def cohesion_panel(drawn: MapScope, by: str) -> None:
    """The numbers behind the picture: ``core.projection.group_cohesion`` per method."""
    st.subheader("The numbers behind the picture")
    rows = [
        {"method": m, f"to its own {by}": c.own, f"to other {by}s": c.other, "gap": c.gap,
         f"{by}s": c.groups, "chunks": c.chunks}
        for m, c in group_cohesion(drawn, groups(drawn, by)).items()
    ]  # fmt: skip
    st.caption(
        f"Mean cosine of each drawn chunk to the centroid of its own {by} (itself left out) "
        f"and to the centroids of the other {by}s, in the model's space, not on the map."
    )
    if rows[0][f"to other {by}s"] is None:  # one group: nothing to compare with
        rows = [{c: v for c, v in r.items() if c not in (f"to other {by}s", "gap")} for r in rows]
    st.dataframe(rows, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.4f") for c in rows[0] if c.startswith("to ")
        or c == "gap"
    })  # fmt: skip


def rank_panel(
    query: str,
    drawn: MapScope,
    chunk_id: str,
    methods: Sequence[str],
    policy: ChunkPolicy,
    doc_id: str | None,
    k: int,
    picked: bool,
) -> None:
    """The picked (or gold) chunk's rank at full depth under each method, with the
    cosines behind it (``core.diagnose.depth``, as Compare's "Where does a chunk rank?")."""
    chunk = drawn.chunks[drawn.row_of[chunk_id]]
    st.subheader("Where does it rank?")
    ranks = full_depth_ranks(
        query, chunk_id, methods=methods, encoder=eng.encoder(), store=chunk_store.existing_store(),
        policy=policy, doc_id=doc_id, k=k,
    )  # fmt: skip
    st.caption(
        f"The query's cosines behind the ranking, for {'the picked' if picked else 'the gold'} "
        f"chunk ({md(chunk.doc_id)} chars {chunk.char_start:,}-{chunk.char_end:,}): its "
        f"rank at full depth, rank 1's and rank {k}'s cosine, and how much its cosine must "
        f"rise to enter the top {k}."
    )
    numbers = ("score", "rank 1", f"rank {k}", f"to enter the top {k}")
    st.dataframe(dep.rank_rows(ranks, k), hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.4f") for c in numbers
    })  # fmt: skip


def picked_panel(chunk: StoredHit) -> None:
    """The chunk clicked on the map: its title, citation, and the chunk on its page."""
    st.subheader("The picked chunk")
    st.markdown(f"**{md(ins.chunk_label(chunk, True))}**")
    cite_view.citation_link(chunk.citation)
    doc = session.library().get(chunk.doc_id)
    if doc is not None and chunk.citation.verify(doc) is CitationStatus.OK:
        ins.draw_on_document(doc, chunk, None)
    else:
        st.caption("Its document is not loaded here in the indexed version: the stored text.")
        st.text(chunk.text[:2000])
