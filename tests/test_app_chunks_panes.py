"""Two policies on a PDF page stay readable: the Chunks page stacks the two panels, each
page figure at the width one panel has alone, instead of two half-width pages whose body
text came out about 7 px; a reflowable text still compares side by side."""

from __future__ import annotations

from tests.test_app_pages import app, open_page, store_dir
from workbench.state import ChunksKey

__all__ = ["app", "store_dir"]  # fixtures, imported for pytest


def _figure_widths(node, share: float = 1.0) -> list[float]:
    """The share of the main area's width each page figure is drawn in (a column's weight
    is its share of the row it is in)."""
    found = []
    weight = getattr(node, "weight", None)
    if getattr(node, "type", "") == "column" and weight:
        share *= weight
    body = getattr(getattr(node, "proto", None), "body", "")
    if isinstance(body, str) and "cs-page-inner" in body:
        found.append(share)
    for child in getattr(node, "children", {}).values():
        found += _figure_widths(child, share)
    return found


def test_two_policies_on_a_page_are_stacked_at_a_readable_width(app):
    open_page(app, "chunks")
    alone = _figure_widths(app.main)
    app.toggle(key=ChunksKey.COMPARE).set_value(True).run()
    assert not app.exception, [e.value for e in app.exception]
    paired = _figure_widths(app.main)
    assert len(alone) == 1 and len(paired) == 2
    assert min(paired) >= alone[0] * 0.99  # each page as wide as a single panel's
    assert len([m for m in app.metric if m.label == "Chunks"]) == 2


def test_reflowable_text_still_compares_side_by_side(app):
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    open_page(app, "chunks")
    app.toggle(key=ChunksKey.COMPARE).set_value(True).run()
    halves = [c for c in app.main.columns if getattr(c, "weight", None) == 0.5]
    assert len(halves) >= 2
