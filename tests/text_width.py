"""How wide a chart label is drawn: measured in Liberation Sans (Arial's metrics, one of
Plotly's default font families), so a margin test checks that the label fits, not the
constant the chart used to size it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

FONTS = (
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),  # wider: a stricter check
)


@cache
def _font(size: float):  # -> PIL.ImageFont.FreeTypeFont
    from PIL import ImageFont

    for path in FONTS:
        if path.exists():
            return ImageFont.truetype(str(path), round(size))
    pytest.skip("no Liberation Sans or DejaVu Sans font to measure labels with")


def label_px(text: str, size: float | None) -> float:
    """The drawn width of ``text`` at ``size`` px (Plotly's default 12 when None)."""
    return float(_font(size or 12).getlength(text))


def right_margin_holds(fig) -> bool:
    """Every label drawn from the plot's right edge rightwards (left-anchored: at the
    paper's right edge, or at the last category of the x axis) fits in the right margin."""
    need = [
        label_px(n.text, n.font.size if n.font else None) + (n.xshift or 0)
        for n in fig.layout.annotations
        if n.xanchor == "left"
    ]
    return bool(need) and fig.layout.margin.r >= max(need)
