"""Chunkscope workbench: ``streamlit run app.py`` (or ``make run``).

Navigation is built from ``workbench/_ui_frame.MENU``: sections of page scripts under
``pages/``. Streamlit's own sidebar listing of that folder is switched off
(``client.showSidebarNavigation = false`` in ``.streamlit/config.toml``); the frame draws
the menu with ``st.page_link``. A further page joins by adding a row to ``MENU`` and
starting with ``_ui_frame.entry("pages/<name>.py")``. Shared glue: state keys, cached
loaders and the library in ``workbench/_ui.py``; the frame and sidebar in
``workbench/_ui_frame.py``; the citation link and document views in
``workbench/_ui_cite.py``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench import _ui_frame

SECTIONS: dict[str, list[st.Page]] = {
    section: [
        st.Page(path, title=title, icon=icon, default=path == _ui_frame.HOME)
        for path, title, icon in pages
    ]
    for section, pages in _ui_frame.MENU.items()
}


# A local image: a Material icon as page_icon makes the browser fetch its favicon from
# Google's font server, which an offline machine cannot reach.
ICON = Path(__file__).resolve().parent / "workbench" / "assets" / "icon.png"
st.set_page_config(page_title="Chunkscope", page_icon=str(ICON), layout="wide")
page = st.navigation(SECTIONS, position="hidden")  # the sidebar's menu is _ui_frame's
_ui_frame.follow_redirect()
with _ui_frame.framed():
    page.run()
