"""Chunkscope workbench: ``streamlit run app.py`` (or ``make run``).

Navigation is built from ``workbench.frame.sidebar.MENU``: sections of page scripts under
``pages/``. Streamlit's own sidebar listing of that folder is switched off
(``client.showSidebarNavigation = false`` in ``.streamlit/config.toml``); the frame draws
the menu with ``st.page_link``. A further page joins by adding a row to ``MENU``, starting
with ``sidebar.entry("pages/<name>.py")`` and keeping its own parts in a package of its
own under ``workbench/`` (``docs/layout.md``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench.engine import run_files
from workbench.frame import sidebar

SECTIONS: dict[str, list[st.Page]] = {
    section: [
        st.Page(path, title=title, icon=icon, default=path == sidebar.HOME)
        for path, title, icon in pages
    ]
    for section, pages in sidebar.MENU.items()
}


# A local image: a Material icon as page_icon makes the browser fetch its favicon from
# Google's font server, which an offline machine cannot reach.
ICON = Path(__file__).resolve().parent / "workbench" / "assets" / "icon.png"
st.set_page_config(page_title="Chunkscope", page_icon=str(ICON), layout="wide")
page = st.navigation(SECTIONS, position="hidden")  # the sidebar's menu is the frame's
sidebar.follow_redirect()
run_files.start_on_run()  # a workbench `chunkscope open RUN.json` started: on that run
with sidebar.framed():
    page.run()
