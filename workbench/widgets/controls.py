"""Widgets several pages share: the page picker, the chunking policy controls, the numbers
of a chunking. Values a page must keep across pages live under ``state.Key`` (see
``synced``); policy widgets keep their own values for the session (``persist_state``)."""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import defaults
from core.chunk import ChunkStats, policy_from_args
from core.chunk import policy_registry as registry
from core.provenance.types import ChunkPolicy, Document
from core.render.views import stats_items
from workbench.state import (
    Key,
    live_policy_widget,
    option_widget,
    overlap_widget,
    page_widget,
    policy_widget,
    size_widget,
    unit_widget,
)
from workbench.widgets import wording
from workbench.widgets.wording import md

# Slider range per unit: (min, max, step).
UNIT_RANGES: dict[str, tuple[int, int, int]] = {
    "chars": (50, 4000, 50),
    "tokens": (16, 1024, 8),
    "sentences": (1, 30, 1),
}


def page_number_input(doc: Document) -> int:
    """A 1-based page picker shared by Parse and Chunks (kept in range of ``doc``)."""
    n_pages = len(doc.pages)
    page = min(max(1, int(st.session_state[Key.PAGE])), n_pages)
    st.session_state[Key.PAGE] = page
    widget = page_widget(doc.doc_id)
    st.number_input(f"Page (of {n_pages})", 1, n_pages, page, 1, **wording.synced(widget, Key.PAGE))
    return int(st.session_state[Key.PAGE])


def policy_controls(
    slot: str, *, horizontal: bool = False, first: str = defaults.POLICY
) -> ChunkPolicy:
    """Policy, unit, size and overlap widgets (in a row when ``horizontal``), starting on
    policy ``first`` (by default ``core.defaults.POLICY``) with its default unit and sizes,
    and a checkbox per option the policy takes (all from the policy registry); each (slot,
    policy, unit) keeps its own values for the session. Overlap is capped below the size,
    so this never raises."""
    names = registry.policy_names()
    keep: dict[str, Any] = {"persist_state": "session", "required": True}
    imported = bool(registry.fixed_names())  # their names get a row of their own
    picker = st.container() if imported or not horizontal else None
    cells = st.columns([1.6, 0.9, 1.25, 1.25]) if horizontal else [st.container()] * 4
    name = (picker or cells[0]).segmented_control(
        "Policy", names, default=first, key=policy_widget(slot), **keep
    )
    name = _own_splitter(picker or cells[0], slot) or name
    spec = registry.get(name)
    if spec.fixed_boundaries:  # an imported chunk set: its boundaries are the import's
        (picker or cells[0]).caption(f"Boundaries as imported: {md(spec.summary)}.")
        return spec.default_policy()
    unit = cells[1].segmented_control(
        "Unit", spec.units, default=spec.unit, key=unit_widget(slot, name), **keep
    )
    low, high, step = UNIT_RANGES[unit]
    size_default, overlap_default = spec.sizes[unit]
    size = cells[2].slider(
        f"Size ({unit})", low, high, size_default, step, key=size_widget(slot, name, unit),
        persist_state="session",
    )  # fmt: skip
    overlap = _overlap_slider(
        cells[3], spec, unit, size, overlap_default, overlap_widget(slot, name, unit)
    )
    options: dict[str, Any] = option_checkboxes(spec, slot)
    return policy_from_args(name, size, overlap, unit, **options)


def _own_splitter(cell: DeltaGenerator, slot: str) -> str | None:
    """The canonical name of a splitter of the user's own typed in ``slot`` (``KIND:TARGET``,
    ``core.imported.live``), resolved now; None when none is typed or it cannot be had
    (said in place, in one line, and the picked policy is used)."""
    own = cell.text_input(
        "Your own splitter", key=live_policy_widget(slot), label_visibility="collapsed",
        placeholder="or your own splitter: langchain:RecursiveCharacterTextSplitter",
        help="langchain:CLASS, llamaindex:CLASS, chonkie:CLASS or py:package.module:factory "
        "(parameters as a call: CLASS(key=value)); the sliders are its chunk_size and "
        "chunk_overlap, in its own unit, and its pieces are anchored in the text",
    ).strip()  # fmt: skip
    if not own:
        return None
    try:
        spec = registry.get(own)
    except registry.PolicyError as exc:
        cell.error(md(exc), icon=":material/error:")
        return None
    cell.caption(md(spec.summary))
    return spec.name


def idle_overlap_note(policy: ChunkPolicy, overlap_share: float) -> None:
    """Say why the overlap slider changed nothing visible: an overlap was asked for, yet
    no character of this document is in two chunks (the policy's own rule says when it
    repeats text, e.g. ``structure`` only inside a block it splits at sentences)."""
    if policy.overlap > 0 and overlap_share == 0:
        rule = registry.get(policy.name).overlap_help
        st.caption(
            f"Overlap {policy.overlap} {policy.unit} changes nothing on this document: no "
            f"text is in two chunks. {md(rule)}"
        )


def overlap_limit(unit: str, size: int) -> tuple[int, int]:
    """(largest overlap the slider offers, its step) for a chunk of ``size``: below the
    size on the slider's own grid, and at most half the unit's largest size."""
    _, high, step = UNIT_RANGES[unit]
    step = 1 if unit == "sentences" else step
    return max(0, min(high // 2, size - step)), step


def _overlap_slider(
    cell: DeltaGenerator, spec: registry.PolicySpec, unit: str, size: int, default: int, key: str
) -> int:
    """The overlap slider, its range following the size: it never offers an overlap the
    chunk cannot have (a kept value above the new range is brought within it)."""
    top, step = overlap_limit(unit, size)
    if top < step:
        cell.caption(f"Overlap: none at a size of {size} {unit}.")
        return 0
    if key in st.session_state and st.session_state[key] > top:
        st.session_state[key] = top
    return int(cell.slider(
        f"Overlap ({unit})", 0, top, min(default, top), step, key=key,
        persist_state="session", help=spec.overlap_help or None,
    ))  # fmt: skip


def option_checkboxes(spec: registry.PolicySpec, slot: str) -> dict[str, bool]:
    """A checkbox per option ``spec`` takes, in one row; ``{option: on}`` for each."""
    takes = [o for o in registry.OPTIONS if o.name in spec.options]
    if not takes:
        return {}
    cells = st.columns(len(takes))
    return {
        o.name: cells[i].checkbox(
            o.label, key=option_widget(o.suffix, slot, spec.name), help=o.help,
            persist_state="session",
        )
        for i, o in enumerate(takes)
    }  # fmt: skip


def stats_metrics(stats: ChunkStats, *, columns: int = 2) -> None:
    """The numbers of a ``core.chunk.ChunkStats`` as a grid of metrics."""
    grid = st.columns(columns)
    for i, (label, value, detail) in enumerate(stats_items(stats)):
        grid[i % columns].metric(label, value, detail, delta_color="off", delta_arrow="off")
