"""Glue of the clickable page: the chunks of one policy drawn over a rendered page
(``core.render.page_pick``), a click picking one of them.

The page shown starts at the anchor's page (the inspected or gold chunk) and a number
input moves it; the chart's key holds the anchor and the page, so a new anchor starts
from a clean selection. A click stores ``(anchor, chunk_id)`` under the caller's state key:
the pick belongs to the anchor it was made for and lapses when the anchor changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.errors import ChunkscopeError
from core.provenance.types import Document
from core.render.page_pick import PickTarget, chunk_pick_figure
from workbench.widgets.wording import md

PICK_ZOOM = 1.5  # pixels per point of the page image (the clickable view is ~700 px wide)


def picked(state_key: str, anchor: str) -> str | None:
    """The chunk id clicked for ``anchor`` (None: nothing clicked since it was anchored)."""
    got = st.session_state.get(state_key)
    return got[1] if got and got[0] == anchor else None


def _take(chart_key: str, state_key: str, anchor: str) -> None:
    """Chart callback: the clicked marker's chunk id (its ``customdata``)."""
    points = st.session_state[chart_key].selection.points
    for point in points:
        data = point.get("customdata")
        if data:
            st.session_state[state_key] = (anchor, data[0] if isinstance(data, list) else data)
            return


def chart_key(key: str, anchor: str, page: int) -> str:
    return f"{key}_fig_{anchor}_{page}"


def page_picker(
    doc: Document,
    targets: Sequence[PickTarget],
    *,
    key: str,
    state_key: str,
    anchor: str,
    first_page: int,
) -> None:
    """The page with ``targets`` clickable; a click stores its chunk under ``state_key``."""
    if not doc.is_paged:
        st.caption(f"{md(doc.doc_id)} has no pages: pick a chunk by its words instead.")
        return
    cells = st.columns([1, 4], vertical_alignment="bottom")
    page = int(
        cells[0].number_input(
            f"Page (of {len(doc.pages)})", 1, len(doc.pages), first_page,
            key=f"{key}_page_{anchor}",
        )
    )  # fmt: skip
    here = picked(state_key, anchor)
    on_page = [t for t in targets if page in doc.pages_of(t.char_start, t.char_end)]
    cells[1].caption(
        f"Page {page}: {len(on_page)} chunk(s) of this policy. Click one to rank it"
        + ("; the highlighted one is ranked below." if here else ".")
    )
    try:
        fig = chunk_pick_figure(doc, targets, page, selected=here, zoom=PICK_ZOOM)
    except ChunkscopeError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    name = chart_key(key, anchor, page)
    st.plotly_chart(
        fig, key=name, on_select=lambda: _take(name, state_key, anchor),
        selection_mode="points", config={"displayModeBar": False},
    )  # fmt: skip
