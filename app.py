"""Chunkscope workbench: ``streamlit run app.py`` (or ``make run``).

Navigation is built from ``SECTIONS``: each section is a list of pages under
``workbench/``. (Not ``pages/``: Streamlit lists a folder of that name in the sidebar by
itself, module names and all, before the navigation is built.) Further pages join by
adding an ``st.Page`` to a section (or a new section) and starting with
``_ui_frame.entry("workbench/<name>.py")``. Shared glue: state keys, cached loaders and
the library in ``workbench/_ui.py``; the frame and sidebar in ``workbench/_ui_frame.py``;
the citation link and document views in ``workbench/_ui_cite.py``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench import _ui_frame

SECTIONS: dict[str, list[st.Page]] = {
    "Inspect": [
        st.Page(
            "workbench/library.py", title="Library", icon=":material/folder_open:", default=True
        ),
        st.Page("workbench/parse.py", title="Parse", icon=":material/view_quilt:"),
        st.Page("workbench/chunks.py", title="Chunks", icon=":material/segment:"),
        st.Page("workbench/source.py", title="Source", icon=":material/format_quote:"),
    ],
    "Retrieve": [
        st.Page("workbench/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("workbench/evaluate.py", title="Evaluate & triage", icon=":material/fact_check:"),
        st.Page("workbench/tune.py", title="Tune", icon=":material/tune:"),
    ],
}


# A local image: a Material icon as page_icon makes the browser fetch its favicon from
# Google's font server, which an offline machine cannot reach.
ICON = Path(__file__).resolve().parent / "workbench" / "assets" / "icon.png"
st.set_page_config(page_title="Chunkscope", page_icon=str(ICON), layout="wide")
page = st.navigation(SECTIONS)
_ui_frame.follow_redirect()
with _ui_frame.framed():
    page.run()
