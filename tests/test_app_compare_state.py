"""Compare keeps what the user typed across pages, and its index panel and query start
from the user's own documents, not the pump demo, once there are any."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from core.formats import load_document
from tests.test_app_engine_pages import TIMEOUT_S, fake, index_demo, open_page, store_dir
from workbench.engine import resources as eng
from workbench.state import EngineKey, EvalKey, LibraryKey
from workbench.widgets import wording

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest

LEDGER = b"# Ledger\n\nEvery payment is recorded with its date and amount.\n"


def test_the_typed_query_survives_other_pages(fake, store_dir):
    index_demo(store_dir, fake, methods=("naive", "bm25"))
    at = open_page("compare")
    assert at.text_input(key=EngineKey.QUERY_WIDGET).value == eng.DEMO_QUERY  # the demo's
    at.text_input(key=EngineKey.QUERY_WIDGET).set_value("warranty period").run()
    for page in ("source", "library", "chunks"):
        at.switch_page(f"pages/{page}.py").run()
        at.switch_page("pages/compare.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.text_input(key=EngineKey.QUERY_WIDGET).value == "warranty period", page


def test_own_documents_get_no_pump_query_and_are_the_index_default(fake, store_dir):
    doc = load_document(LEDGER, name="ledger.md")
    index_demo(store_dir, fake, methods=("naive",), docs=[doc])
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at.file_uploader(key=LibraryKey.UPLOADER).set_value(
        [("ledger.md", LEDGER, "application/octet-stream")]
    ).run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=EngineKey.QUERY_WIDGET).value == ""  # no pump query on a ledger
    assert at.multiselect(key=EngineKey.INDEX_DOCS).value == ["ledger"]
    fresh = open_page("compare")  # another session: the library still holds the ledger
    assert fresh.multiselect(key=EngineKey.INDEX_DOCS).value == ["ledger"]


def test_without_own_documents_the_index_panel_offers_the_demo(fake, store_dir):
    at = open_page("compare")
    assert at.multiselect(key=EngineKey.INDEX_DOCS).value == list(eng.demo_documents())


def test_evaluate_tables_show_every_row_without_scrolling(fake, store_dir, monkeypatch):
    from streamlit.delta_generator import DeltaGenerator

    drawn: list[tuple[int, object]] = []
    original = DeltaGenerator.dataframe

    def spy(self, data=None, *args, **kwargs):
        ranks = isinstance(data, list) and data and "score is" in data[0]  # a chunk's ranks
        if not ranks:
            drawn.append((len(data) if data is not None else 0, kwargs.get("height", "auto")))
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "dataframe", spy)  # columns' tables
    monkeypatch.setattr(st, "dataframe", lambda *a, **k: spy(st._main, *a, **k))  # st.dataframe
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metric_rows, delta_rows = drawn[-2][0], drawn[-1][0]
    assert metric_rows > 10 and delta_rows > 10  # more rows than the default box shows
    assert "late" in at.selectbox(key=EvalKey.DELTA_PAIR).value  # late vs naive first
    assert "naive" in at.selectbox(key=EvalKey.DELTA_PAIR).value
    assert drawn[-2:] == [
        (metric_rows, wording.table_height(metric_rows)),  # the metric table whole
        (delta_rows, wording.table_height(delta_rows)),  # and the deltas
    ]
