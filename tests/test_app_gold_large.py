"""The failure reader's gold, readable: under a PDF page's thumbnail, a button opens the
gold's part of its page as wide as the window, with its text (a table's figures cannot be
read in the thumbnail's column)."""

from __future__ import annotations

from tests.test_app_engine_pages import fake, open_page, store_dir
from workbench.state import EvalKey

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest


def test_a_gold_on_a_pdf_page_can_be_read_large(fake, store_dir):
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    card = [c.value for c in at.caption if "first gold chunk" in c.value]
    assert card and "document datasheet" in card[0], card  # the first failure's is a PDF
    (large,) = [b for b in at.button if b.label == "Read it large"]

    def texts() -> list[str]:
        return [h.proto.body for h in at.get("html") if 'class="cs-text"' in h.proto.body]

    before = texts()
    large.click().run()
    assert not at.exception, [e.value for e in at.exception]
    new = [t for t in texts() if t not in before]
    assert len(new) == 1 and "<mark" not in new[0]  # the dialog: the gold's text, plain
    assert any("Gold: datasheet" in c.value for c in at.caption)
    # the same query picked on the chart as well: two cards of it, each its own button
    at.session_state[EvalKey.QUERY_ID] = card[0].split(" · ")[0].replace("\\", "")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len([b for b in at.button if b.label == "Read it large"]) == 2
