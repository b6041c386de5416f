"""The overlap slider follows the chunk size: it never offers an overlap the chunk cannot
have (a 200-character chunk offered 1,300 and then said "capped at 199")."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from workbench.state import unit_widget
from workbench.widgets.controls import overlap_limit


def _controls() -> None:
    import streamlit as st

    from workbench.widgets import controls

    policy = controls.policy_controls("t", first="fixed")
    st.text(f"{policy.size}|{policy.overlap}")


def _overlap(at: AppTest):
    return next(s for s in at.slider if s.label.startswith("Overlap"))


def test_the_overlap_range_follows_the_size() -> None:
    at = AppTest.from_function(_controls).run()
    at.button_group(key=unit_widget("t", "fixed")).set_value("chars").run()
    size = next(s for s in at.slider if s.label.startswith("Size"))
    _overlap(at).set_value(1300).run()  # allowed while the size is large
    size.set_value(200).run()
    assert not at.exception, [e.value for e in at.exception]
    assert _overlap(at).max == 150 and _overlap(at).value <= 150  # below 200, on its grid
    assert not any("capped" in c.value for c in at.caption)
    assert at.text[0].value == f"200|{_overlap(at).value}"
    size.set_value(50).run()  # the smallest size: no overlap to offer
    assert not [s for s in at.slider if s.label.startswith("Overlap")]
    assert at.text[0].value == "50|0"


def test_the_limit_sits_below_the_size_on_the_sliders_grid() -> None:
    assert overlap_limit("chars", 200) == (150, 50)
    assert overlap_limit("chars", 4000) == (2000, 50)
    assert overlap_limit("tokens", 16) == (8, 8)
    assert overlap_limit("sentences", 1) == (0, 1)
