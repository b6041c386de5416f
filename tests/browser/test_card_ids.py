"""A result card keeps a document id whole: in a narrow column the id moves to its own
line instead of breaking mid-word (the card's text may break anywhere, its id may not)."""

from __future__ import annotations

import pytest

from core.render.markup import STYLESHEET, escape
from workbench.engine.resources import STYLE

DOC_ID = "JOHNSON_JOHNSON_2022Q4_EARNINGS"


def _card(width_px: int) -> str:
    return (
        f"<style>{STYLESHEET}</style>{STYLE}"
        f'<div style="width:{width_px}px;font-family:sans-serif">'
        '<div class="cs-hit"><b class="cs-rank">#1</b><span class="cs-cos">cosine 0.812</span>'
        f'<span class="cs-doc">{escape(DOC_ID)}</span>'
        '<div class="cs-path">Item 2 › Liquidity</div>'
        '<div class="cs-words">Adjusted EPS of $10.15, a long run of words that wraps</div>'
        "</div></div>"
    )


@pytest.mark.parametrize("width_px", [240, 320])
def test_a_document_id_on_a_card_never_breaks_mid_word(page, width_px: int) -> None:
    page.set_content(_card(width_px))
    lines = page.eval_on_selector("span.cs-doc", "e => e.getClientRects().length")
    assert lines == 1  # one line box: the id is whole, on its own line if need be
    shown = page.eval_on_selector("span.cs-doc", "e => e.innerText")
    assert shown == DOC_ID
