"""The Evaluate form: first-look methods by default, the expected cost before Run, a
metric table that keeps every method in view, deltas that say how sure they are, and a
first line that names the query set picked (not the demo's after an upload)."""

from __future__ import annotations

import streamlit as st

from core import defaults
from tests.test_app_engine_pages import fake, open_page, store_dir
from workbench.evaluate import eval_form
from workbench.state import EvalKey

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest
FIVE = ["naive", "late", "contextual", "bm25", "contextual-bm25"]


def test_the_form_starts_on_the_first_look_methods_and_shows_the_cost(fake, store_dir):
    at = open_page("evaluate")
    assert at.multiselect(key=EvalKey.METHODS).value == list(defaults.METHODS)
    caption = " ".join(c.value for c in at.caption)
    assert "Expected cost: " in caption and "texts to embed" in caption


def test_every_method_has_a_column_in_view_and_deltas_say_how_sure(fake, store_dir, monkeypatch):
    from streamlit.delta_generator import DeltaGenerator

    tables: list[list[dict]] = []
    original = DeltaGenerator.dataframe

    def spy(self, data=None, *args, **kwargs):
        if isinstance(data, list) and data and "metric" in data[0]:
            tables.append(data)
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "dataframe", spy)
    monkeypatch.setattr(st, "dataframe", lambda *a, **k: spy(st._main, *a, **k))
    at = open_page("evaluate")
    at.multiselect(key=EvalKey.METHODS).set_value(FIVE).run()
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics, deltas = tables[-2], tables[-1]
    assert list(metrics[0]) == ["metric", *FIVE, "n"]  # one column a method, n once
    assert all("how sure" in row for row in deltas)
    said = {row["how sure"].split(":")[0] for row in deltas}
    assert said <= {"clear", "no change", "could be noise"}  # 35 queries: no "likely, on only"
    assert all(
        row["how sure"] != "clear" or row["95% interval"].count("-") in (0, 2) for row in deltas
    )  # "clear" only with an interval off zero


def test_before_any_run_the_page_names_the_query_set_picked(fake, store_dir):
    at = open_page("evaluate")
    assert any("run the demo set above" in i.value for i in at.info)
    at.session_state[EvalKey.SOURCE] = "upload"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [line] = [i.value for i in at.info if i.value.startswith("No run yet")]
    assert line == "No run yet: run your query set above."
    assert eval_form.no_run_line(False) == "No run yet: an editor runs evaluations here."
