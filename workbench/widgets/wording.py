"""Words on the page: Markdown escaping (``md``: HTML goes through
``core.render.markup.escape``), the uploader's help, notes, table heights, and widget
callbacks that copy a value into session state (``synced``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.formats.format_registry import all_formats, describe_suffixes
from workbench.state import Key


def upload_help() -> str:
    """The uploader's help: every format it reads with its suffixes (the registry's).

    The uploader takes any file and ``read_upload`` refuses the others in one line
    (``core.formats.format_registry.upload_format``): given a ``type=`` list, Streamlit's browser
    side refuses them itself with nothing but "<MIME type> files are not allowed"."""
    return f"Reads {describe_suffixes()}. Any other file is refused with a line saying so."


def format_labels() -> str:
    """``"PDF, text, Markdown, ..."`` for the uploader's label."""
    return ", ".join(dict.fromkeys(spec.label for spec in all_formats()))


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One line about an uploaded file: ``level`` is success, warning or error."""

    name: str
    level: str
    text: str


TABLE_ROW_PX = 35  # st.dataframe's row height (its header row too)


def table_height(n_rows: int) -> int:
    """Pixels for ``st.dataframe`` to show ``n_rows`` and its header without scrolling."""
    return TABLE_ROW_PX * (n_rows + 1) + 3


_MARKDOWN_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!<>|~$:")


def md(text: object) -> str:
    """``text`` for Streamlit markdown (captions, alerts, link labels): every markdown sign
    escaped, so a query id, a file name or a quote is shown as written and never becomes a
    link, an image or a formula."""
    return "".join("\\" + c if c in _MARKDOWN_PUNCTUATION else c for c in str(text))


def synced(widget_key: str, state_key: str, *, reset_page: bool = False) -> dict:
    """Widget kwargs that copy its value to ``state_key`` on change. Values live under
    our own keys, not widget keys, so they survive pages that do not draw the widget."""

    def copy() -> None:
        st.session_state[state_key] = st.session_state[widget_key]
        if reset_page:
            st.session_state[Key.PAGE] = 1

    return {"key": widget_key, "on_change": copy}
