"""Rough edges a real session hit on the workbench, each pinned by the behaviour its fix
gives (AppTest, the fake encoder): a k past the cards, card titles, uploads' messages and
the triage counter."""

from __future__ import annotations

from tests.test_app_engine_pages import (
    TIMEOUT_S,
    column,
    fake,
    index_demo,
    open_page,
    ranked,
    store_dir,
)
from workbench import _ui_engine as eng
from workbench import _ui_inspect as ins

__all__ = ["TIMEOUT_S", "fake", "store_dir"]  # fixtures, imported for pytest


def test_a_k_past_the_cards_is_accepted_and_says_where_the_rest_is(fake, store_dir, monkeypatch):
    monkeypatch.setattr(ins, "MAX_CARDS", 20)  # the demo holds 45 chunks
    index_demo(store_dir, fake, methods=("naive", "bm25"))
    at = open_page("compare")
    box = at.number_input(key=eng.EKey.K)
    assert box.max is None or box.max >= 500  # the browser marks nothing red at k = 500
    box.set_value(500).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [i.value for i in at.info if "k = 500" in i.value]
    assert said and "top 20 cards" in said[0] and "Where does a chunk rank?" in said[0]
    for method in ("naive", "bm25"):
        assert [r for r, _ in ranked(at, method)] == list(range(1, 21))
        assert column(at, method).subheader
    table = [d.value for d in at.dataframe if "to enter the top 500" in d.value.columns]
    assert table, "the full-depth panel measures against the k asked for"
    box.set_value(10).run()
    assert not [i for i in at.info if "k = " in i.value]
