"""Page furniture: running headers and footers of PDFs.

A line is furniture when it sits in the page's top or bottom edge zone
(``EDGE_SHARE`` of the page height, page space) or wholly in a side margin
(``SIDE_SHARE`` of the width: stamps printed up the page edge), and either

* its normalised text (lowercase, whitespace folded, every digit run -> ``#``, so
  "Page 3" and "Page 4" match) occurs in that zone on at least ``repeat_threshold``
  pages, or
* it is a bare page number ("12", "iv", "Page 3", "3 of 12", "- 3 -") and the outermost
  line of its page on that side (for this rule the zone is ``PAGE_NUMBER_SHARE`` deep;
  a bottommost number that runs in step with the pages counts anywhere on the page),
  or
* it is the outermost line of its page on that side, alone in its layout block and set
  smaller than the body text or in another font, and lines like it (outermost, alone
  in their block) sit at its position (2 pt steps) in its size on at least
  ``repeat_threshold`` pages (running headers whose text changes with the section), or
* it is in the top zone at most ``SMALL_SHARE`` of the body size and lines at its
  position in its size sit in the zone on at least ``repeat_threshold`` pages (slide
  navigation).

Furniture needs evidence beyond one page: repetition across pages, or the shape of a
page number at the page's edge. The first line of body text at the top of a column
shares its position with the first lines of other pages, but those sit in blocks of
many lines, so a heading there (alone in its block, in bold) is not taken for a running
header. And furniture is set apart from body text: when every line of a document would
be furniture (a short form, a title page), none is.

Lines in the top zone are headers; lines in the bottom zone or a side margin, footers.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Literal

from core.parse.headings import body_size
from core.provenance.types import Document, TextLine

FurnitureKind = Literal["header", "footer"]
EDGE_SHARE = 0.12
SIDE_SHARE = 0.07
PAGE_NUMBER_SHARE = 0.2
MIN_NUMBERED_PAGES = 2
# Top-zone text at most this share of the body size is navigation or a running head.
SMALL_SHARE = 0.8
# Share of the pages with text on which a zone text must repeat (at least twice).
REPEAT_SHARE = 0.3
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_PAGE_NUMBER = re.compile(
    r"^(page|seite|p\.)?\s*([#]|[ivxlcdm]+)(\s*(of|/|von)\s*#)?$|^[-–—]\s*#\s*[-–—]$"
)


def normalise(text: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("#", text.lower())).strip()


def furniture_lines(doc: Document) -> dict[int, FurnitureKind]:
    """Indices into ``doc.lines`` of header and footer lines (PDFs only)."""
    if not doc.is_paged:
        return {}
    sizes = {p.number: (p.width_pt, p.height_pt) for p in doc.pages}
    zoned: list[tuple[int, FurnitureKind, str]] = []
    for index, line in enumerate(doc.lines):
        zone = _zone(line, *sizes.get(line.page, (0.0, 0.0)), EDGE_SHARE)
        if zone is not None:
            zoned.append((index, zone, normalise(doc.text[line.char_start : line.char_end])))
    with_text = sum(1 for p in doc.pages if p.has_text)
    threshold = max(2, math.ceil(REPEAT_SHARE * with_text))
    outermost = _outermost_lines(doc.lines)
    found = _page_numbers(doc, outermost, sizes)
    running = _Running(doc, zoned, outermost)
    pages_by_text: dict[tuple[FurnitureKind, str], set[int]] = defaultdict(set)
    for index, zone, norm in zoned:
        pages_by_text[(zone, norm)].add(doc.lines[index].page)
    for index, zone, norm in zoned:
        if len(pages_by_text[(zone, norm)]) >= threshold or running.holds(index, zone, threshold):
            found[index] = zone
    if len(found) == sum(1 for line in doc.lines if line.char_end > line.char_start):
        return {}  # no body text to set the furniture apart from: it is all content
    return found


def _page_numbers(
    doc: Document, outermost: set[int], sizes: dict[int, tuple[float, float]]
) -> dict[int, FurnitureKind]:
    """Bare page numbers that are the outermost line of their page, within the outer
    ``PAGE_NUMBER_SHARE`` of the page (wider than the zone: book margins are deep), or,
    anywhere on the page, the bottommost line whose number runs in step with the page
    (number minus page index the same on at least ``MIN_NUMBERED_PAGES`` pages: a short
    page of a filing prints its number right below the text)."""
    found: dict[int, FurnitureKind] = {}
    stepped: dict[int, list[int]] = defaultdict(list)
    bottom = _bottom_lines(doc.lines, outermost)
    for index in outermost:
        line = doc.lines[index]
        raw = doc.text[line.char_start : line.char_end]
        zone = _zone(line, *sizes.get(line.page, (0.0, 0.0)), PAGE_NUMBER_SHARE)
        if not _PAGE_NUMBER.match(normalise(raw)):
            continue
        if zone is not None:
            found[index] = zone
        elif index in bottom and (number := _DIGITS.search(raw)) is not None:
            stepped[line.page - int(number.group())].append(index)
    for indices in stepped.values():
        if len(indices) >= MIN_NUMBERED_PAGES:
            found.update(dict.fromkeys(indices, "footer"))
    return found


def _bottom_lines(lines: tuple[TextLine, ...], outermost: set[int]) -> set[int]:
    """The outermost lines that are the bottommost line of their page."""
    lowest: dict[int, tuple[float, int]] = {}
    for index in outermost:
        line = lines[index]
        if line.bbox_pt is not None and (
            line.page not in lowest or line.bbox_pt[3] > lowest[line.page][0]
        ):
            lowest[line.page] = (line.bbox_pt[3], index)
    return {index for _, index in lowest.values()}


class _Running:
    """The running-header rule (the third rule of the module docstring)."""

    def __init__(
        self, doc: Document, zoned: list[tuple[int, FurnitureKind, str]], outermost: set[int]
    ) -> None:
        self.lines = doc.lines
        self.outermost = outermost
        self.body_pt = body_size(doc.lines)
        self.body_font = _body_font(doc.lines)
        self.block_sizes = Counter((ln.page, ln.source_block) for ln in doc.lines)
        Slots = dict[tuple[FurnitureKind, int, float], set[int]]
        self.pages_by_slot: Slots = defaultdict(set)  # any zone line
        self.alone_by_slot: Slots = defaultdict(set)  # outermost lines alone in their block
        for index, zone, _ in zoned:
            line = doc.lines[index]
            self.pages_by_slot[_slot(line, zone)].add(line.page)
            if self._alone_outside(index):
                self.alone_by_slot[_slot(line, zone)].add(line.page)

    def _alone_outside(self, index: int) -> bool:
        line = self.lines[index]
        return index in self.outermost and self.block_sizes[(line.page, line.source_block)] == 1

    def holds(self, index: int, zone: FurnitureKind, threshold: int) -> bool:
        line = self.lines[index]
        if line.size_pt > 1.05 * self.body_pt:
            return False
        slot = _slot(line, zone)
        unlike_body = line.size_pt <= 0.95 * self.body_pt or line.font != self.body_font
        alone = self._alone_outside(index) and unlike_body
        if alone and len(self.alone_by_slot[slot]) >= threshold:
            return True
        small = zone == "header" and line.size_pt <= SMALL_SHARE * self.body_pt
        return small and len(self.pages_by_slot[slot]) >= threshold


def _body_font(lines: tuple[TextLine, ...]) -> str:
    weights: Counter[str] = Counter()
    for line in lines:
        weights[line.font] += line.char_end - line.char_start
    return weights.most_common(1)[0][0] if weights else ""


def _slot(line: TextLine, zone: FurnitureKind) -> tuple[FurnitureKind, int, float]:
    """Where a line sits on its side of the page: edge coordinate in 2 pt steps, size."""
    assert line.bbox_pt is not None
    edge = line.bbox_pt[1] if zone == "header" else line.bbox_pt[3]
    return zone, round(edge / 2), round(line.size_pt * 2) / 2


def _zone(line: TextLine, width: float, height: float, share: float) -> FurnitureKind | None:
    if line.bbox_pt is None or height <= 0:
        return None
    x0, y0, x1, y1 = line.bbox_pt
    if y1 <= share * height:
        return "header"
    if y0 >= (1 - share) * height:
        return "footer"
    if x1 <= SIDE_SHARE * width or x0 >= (1 - SIDE_SHARE) * width:
        return "footer"
    return None


def _outermost_lines(lines: tuple[TextLine, ...]) -> set[int]:
    """Per page, the indices of the topmost and the bottommost line."""
    top: dict[int, tuple[float, int]] = {}
    bottom: dict[int, tuple[float, int]] = {}
    for index, line in enumerate(lines):
        if line.bbox_pt is None:
            continue
        y0, y1 = line.bbox_pt[1], line.bbox_pt[3]
        if line.page not in top or y0 < top[line.page][0]:
            top[line.page] = (y0, index)
        if line.page not in bottom or y1 > bottom[line.page][0]:
            bottom[line.page] = (y1, index)
    return {i for _, i in top.values()} | {i for _, i in bottom.values()}
