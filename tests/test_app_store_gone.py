"""A store folder that goes away after a page read its entries: Compare's ranking and the
Map's scope stop with one line (``StoreError``), never an ``AttributeError`` on ``None``."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

TIMEOUT_S = 300


def _script(folder: str) -> None:
    import streamlit as st

    from core.chunk import default_policy
    from core.errors import StoreError

    # the script runs on its own (AppTest.from_function): it imports what it uses
    from workbench.documents import chunk_store
    from workbench.documents import session as doc_session
    from workbench.engine import resources as eng
    from workbench.map import map_layout
    from workbench.state import Key

    doc_session.init_state()
    st.session_state[Key.STORE_KIND], st.session_state[Key.STORE_ADDR] = "folder", folder
    policy = default_policy("fixed")
    calls = {
        "existing": chunk_store.existing_store,
        "comparison": lambda: eng.comparison("q", ["naive"], policy, None, [], 5),
        "scope": lambda: map_layout.scope(["naive"], policy, None, [], ()),
    }
    for name, call in calls.items():
        try:
            call()
        except StoreError as exc:
            st.session_state[name] = str(exc)


def test_a_store_folder_that_went_away_stops_the_page_with_one_line(tmp_path: Path) -> None:
    at = AppTest.from_function(_script, args=(str(tmp_path / "gone"),), default_timeout=TIMEOUT_S)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    line = "the store folder no longer exists: pick a store in the sidebar"
    assert [at.session_state[n] for n in ("existing", "comparison", "scope")] == [line] * 3
