"""Printed rows of a page's line fragments, and the figures in them: the first two steps of
the numeric grids (``core.tables.grids``).

1. fragments are grouped into printed rows (vertical centres within ``ROW_SHARE`` of the
   line height, ``printed_rows``);
2. a row is *numeric* when it holds at least ``MIN_VALUES`` figures, or one figure set
   ``SINGLE_GAP_SHARE`` line heights or more right of its label (``Row.values``): figures
   count only right of a row's label (a section number before its title is none), years
   are column headers, dashes alone are a list's markers, a line with leader dots is a
   contents line, and words that start right of every figure are a comment column, not
   the row's label.

A figure's right edge is where its digits end: ingest cuts a hanging "%" or ")" and a
currency sign joined to the line off the fragment (``FIGURE_END``, applied by
``core.ingest.pdf_lines.grid_fragments``), as a right-aligned column aligns them.

Coordinates: boxes are in the page's unrotated text space (``rawdict``), points, y down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.provenance.geometry import BBox

ROW_SHARE = 0.4
MIN_VALUES = 2
SINGLE_GAP_SHARE = 6.0
_FIGURE = re.compile(
    r"^[(\[]?[-−–+]?[$€£¥]?\s?[-−–]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\s?[%x]?[)\]]?"
    r"(\s?\(?[a-z]\))?\*?(\s?(bps|bp|pts|pp))?$|^[—–-]{1,2}$|^n/?[am]$|^nm$",
    re.I,
)
_DIGIT = re.compile(r"\d")
_TWO_LETTERS = re.compile(r"[^\W\d_][\s\S]*?[^\W\d_]")  # a letter, later another
_LEADERS = re.compile(r"(\.\s?){4,}|…{2,}")
_YEAR = re.compile(r"^(19|20)\d\d$")
# The end of a line that closes a figure: its last digit (or a dash, "—" for nil), a sign
# and a unit that hang after the digits ("23.9 %", "(347)", "(7.4)%", "112 bps":
# statements right-align the digits and let the rest hang into the gutter, 13 pt on
# MGM's statistics, 19 pt on PepsiCo's margins) and the currency sign of the next column
# that the text extraction joined to the line ("0.69 $", "— $").
FIGURE_END = re.compile(r"(?:\d\s*([%)\]]+)?(?:\s*(bps|bp|pts|pp))?|[—–-])(?:\s+([$€£¥]))?$")
FIGURE_UNITS = ("bps", "bp", "pts", "pp")

Fragment = tuple[BBox, str]


@dataclass(slots=True)
class Row:
    """One printed row; ``label``, ``edges`` and ``values`` are computed once, when the
    row is complete (the grid search reads them many times)."""

    fragments: list[Fragment]
    top: float
    bottom: float
    height: float
    left: float  # where the row starts: its leftmost fragment's left edge
    _label: BBox | None = None
    _values: list[float] | None = None
    _figures_left: float = float("inf")

    @property
    def label(self) -> BBox | None:
        """The box of the row's leftmost fragment with two letters (its label), if any;
        words that start right of every figure of the row are a comment column (the
        10-Q's "Operational Results Commentary" beside a row with no label), not one."""
        if self._values is None:
            self._measure()
        return self._label

    @property
    def values(self) -> list[float]:
        """``edges`` when the row is a row of figures: two or more, or one set well apart
        from the label on its left (a one-column table), else ``[]``."""
        if self._values is None:
            self._measure()
        return self._values  # type: ignore[return-value]

    def _measure(self) -> None:
        label: BBox | None = None  # the leftmost worded fragment (the first of equals)
        figures: list[Fragment] = []
        for box, text in self.fragments:
            if (label is None or box[0] < label[0]) and _two_letters(text):
                label = box
            if _is_figure(text):
                figures.append((box, text))
        if label is not None and figures and label[0] > max(box[2] for box, _ in figures):
            label = None  # a comment right of the figures
        self._label = label
        self._values = _values(self, label, figures) if figures else []
        if figures:
            self._figures_left = min(box[0] for box, _ in figures)

    @property
    def figures_left(self) -> float:
        """The left edge of the row's leftmost figure (infinite without one)."""
        if self._values is None:
            self._measure()
        return self._figures_left


def _values(row: Row, label: BBox | None, figures: list[Fragment]) -> list[float]:
    """The right edges of the figures right of the row's label (years are column
    headers, and a section number left of its title is no figure) when they make a row
    of figures (see ``Row.values``)."""
    low = label[2] if label is not None else float("-inf")
    kept = [box for box, text in figures if box[0] >= low and not _YEAR.match(text.strip())]
    edges = [box[2] for box in kept]
    if not any(_DIGIT.search(text) for _, text in figures):
        return []  # dashes alone (a list's markers) are no row of figures
    if any(_LEADERS.search(text) for _, text in row.fragments):
        return []  # a contents line: title, leader dots, page number
    if len(edges) != 1:
        return edges if len(edges) >= MIN_VALUES else []
    figure = kept[0]
    gap = SINGLE_GAP_SHARE * row.height
    return edges if label is not None and figure[0] - label[2] >= gap else []


def _two_letters(text: str) -> bool:
    return _TWO_LETTERS.search(text) is not None


def _is_figure(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and len(stripped) <= 24 and _FIGURE.match(stripped) is not None


def printed_rows(fragments: Sequence[Fragment]) -> list[Row]:
    """Fragments grouped into printed rows, top to bottom: a fragment joins the current
    row when its vertical centre lies within ``ROW_SHARE`` of the larger of its own and
    the row's first height from the row's centre (the row grows as fragments join)."""
    rows: list[Row] = []
    row: Row | None = None
    top = bottom = reach = 0.0  # the current row's extent and its first height's share
    for box, text in sorted(fragments, key=_centre):
        if not text or text.isspace():
            continue
        y0, y1 = box[1], box[3]
        height = y1 - y0
        if height < 1.0:
            height = 1.0
        if row is not None and abs((y0 + y1) / 2 - (top + bottom) / 2) <= max(
            ROW_SHARE * height, reach
        ):
            row.fragments.append((box, text))
            if y0 < top:
                top = row.top = y0
            if y1 > bottom:
                bottom = row.bottom = y1
            if box[0] < row.left:
                row.left = box[0]
            continue
        row = Row([(box, text)], y0, y1, height, box[0])
        rows.append(row)
        top, bottom, reach = y0, y1, ROW_SHARE * height
    return rows


def _centre(fragment: Fragment) -> float:
    box = fragment[0]
    return (box[1] + box[3]) / 2
