"""Glue of method choices on the Compare and Evaluate pages: what the registry offers for
the loaded model, the suggested fusions, and a builder that adds any fusion by name.

Every list here is read from ``core.methods``: a method registered there appears in the
pickers without an edit here.
"""

from __future__ import annotations

import streamlit as st

from core import methods as registry
from workbench.engine import resources as eng
from workbench.state import EngineKey
from workbench.widgets.wording import md

SUGGESTED_FUSIONS = registry.SUGGESTED_FUSIONS


stored_methods = eng.usable_methods  # registered stored methods this model can run


def offered_methods() -> list[str]:
    """Stored methods, then the suggested fusions and this session's own, when runnable."""
    st.session_state.setdefault(EngineKey.CUSTOM_METHODS, [])
    stored = set(stored_methods())
    fused = []
    for name in (*SUGGESTED_FUSIONS, *st.session_state[EngineKey.CUSTOM_METHODS]):
        try:
            spec = registry.get(name)
        except registry.UnknownMethodError:
            continue
        if set(spec.parts) <= stored and spec.name not in fused:
            fused.append(spec.name)
    return [*stored_methods(), *fused]


def _add_fusion(select_key: str, builder: str) -> None:
    parts = st.session_state[f"{builder}_parts"]
    how = st.session_state[f"{builder}_how"]
    if how == "rrf":
        tail = f"rrf{int(st.session_state[f'{builder}_k'])}"
    else:
        tail = "w" + ",".join(f"{st.session_state[f'{builder}_w{i}']:g}" for i in range(len(parts)))
    try:
        name = registry.get(f"hybrid({','.join(parts)};{tail})").name
    except registry.UnknownMethodError as exc:
        st.session_state[f"{builder}_error"] = str(exc)
        return
    st.session_state[f"{builder}_error"] = ""
    if name not in st.session_state[EngineKey.CUSTOM_METHODS]:
        st.session_state[EngineKey.CUSTOM_METHODS].append(name)
    chosen = st.session_state.get(select_key) or []
    if name not in chosen:
        st.session_state[select_key] = [*chosen, name]


def fusion_builder(select_key: str) -> None:
    """A popover that builds ``hybrid(A,B;rrfK)`` or ``hybrid(A,B;wX,Y)`` from parts and
    adds it to the picker ``select_key``."""
    builder = f"{select_key}_fuse"
    with st.popover("Add a hybrid", icon=":material/merge:"):
        stored = stored_methods()
        parts = st.multiselect(
            "Fuse these methods", stored, key=f"{builder}_parts",
            default=[m for m in registry.FUSED if m in stored],
        )  # fmt: skip
        how = st.radio(
            "Fusion", ("rrf", "weighted"), horizontal=True, key=f"{builder}_how",
            format_func={"rrf": "reciprocal rank (RRF)", "weighted": "weighted scores"}.get,
        )  # fmt: skip
        if how == "rrf":
            st.number_input("K (score = Σ 1/(K + rank))", 1, 1000, 60, key=f"{builder}_k")
        else:
            cells = st.columns(max(1, len(parts)))
            for i, part in enumerate(parts):
                cells[i].number_input(part, 0.0, 10.0, 1.0, 0.1, key=f"{builder}_w{i}")
            st.caption("Each part's scores are min-max scaled to [0, 1] before weighting.")
        st.button("Add", disabled=len(parts) < 2, on_click=_add_fusion, args=(select_key, builder))
        if error := st.session_state.get(f"{builder}_error"):
            st.error(md(error), icon=":material/error:")


def score_label(method: str) -> str:
    """What a method's scores are, for captions and column headings."""
    return registry.get(method).score.label


def summary(method: str) -> str:
    return registry.get(method).summary
