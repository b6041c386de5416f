"""Line-level rules of the PDF canonical text (see ``core.ingest.pdf``'s docstring).

A ``Line`` is one visual line after clean-up: its text, one box per character (NaN rows
for characters the builder inserted), its box, and its dominant font. All boxes here are
in the page's unrotated text space (``rawdict`` coordinates), points, y downwards.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pymupdf

from core.native import stext as stext_native
from core.native.stext import LineParts
from core.provenance.geometry import BBox, Box, bounding, contains_centre, union_of
from core.tables.finder import TableRegion
from core.tables.grid_rows import FIGURE_END, FIGURE_UNITS, Fragment

NAN_BOX: BBox = (float("nan"),) * 4
LIGATURES: dict[str, str] = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
HYPHENS = "-\u00ad\u2010"
# A line needs the slow per-character path when it has whitespace other than a plain
# space, control characters or ligatures (or, after its edge spaces are stripped, a run
# of spaces, or a glyph that is not one character, or a box outside the page), or a
# lone surrogate (a ToUnicode map can yield one; no encoder or tokenizer accepts it).
_NEEDS_CARE = re.compile(r"[^\S ]|[\x00-\x1f\x7f-\x9f\ufb00-\ufb06\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_SPACE = re.compile(r"\s")
_EDGE_TOLERANCE_PT = 1.0
_FIGURE_TAIL = frozenset("%)]$€£¥")  # last characters ``FIGURE_END`` can cut at


@dataclass(slots=True)
class Line:
    """One visual line after clean-up, in unrotated text space."""

    text: str
    boxes: list[BBox]
    bbox: BBox
    font: str
    size_pt: float
    flags: int
    horizontal: bool = True
    # 0-1 for a line read by OCR (``core.ingest.ocr``); None for a text-layer line.
    confidence: float | None = None


def block_lines(block: dict, rect: pymupdf.Rect) -> list[Line]:
    """The cleaned, non-empty lines of one rawdict block."""
    return clean_lines(map(raw_line_parts, block["lines"]), rect)


def clean_lines(block: Iterable[LineParts | None], rect: pymupdf.Rect) -> list[Line]:
    """The cleaned, non-empty lines of one block's line parts (a block of
    ``stext_native.page_lines``, or of ``raw_line_parts``, which gives ``None`` for a
    line without characters)."""
    out: list[Line] = []
    for parts in block:
        line = clean_line(parts, rect) if parts is not None else None
        if line is not None:
            out.append(line)
    return out


def raw_line_parts(raw_line: dict) -> LineParts | None:
    """What a rawdict line holds for the canonical text: its characters, their boxes,
    its bbox, whether it runs left to right, and the font, size and flags of its first
    span with the most characters (``core.native.stext`` reads the same)."""
    spans = raw_line["spans"]
    if not spans:
        return None
    chars = [ch for span in spans for ch in span["chars"]] if len(spans) > 1 else spans[0]["chars"]
    if not chars:
        return None
    if len(spans) == 1:
        main = spans[0]
    else:  # the first span with the most glyphs, as max() picks
        sizes = [len(span["chars"]) for span in spans]
        main = spans[sizes.index(max(sizes))]
    return (
        "".join([ch["c"] for ch in chars]),
        [ch["bbox"] for ch in chars],
        raw_line["bbox"],
        raw_line["dir"] == (1.0, 0.0),
        main["font"],
        main["size"],
        main["flags"],
    )


def visible_char_boxes(blocks: list[list[Line]]) -> np.ndarray:
    """The boxes (rows ``x0 y0 x1 y1``) of every character of ``blocks`` that is not
    whitespace (a box the builder inserted, NaN, is none), in unrotated text space."""
    lines = [line for block in blocks for line in block]
    text = "".join([line.text for line in lines])
    boxes = stext_native.box_array([line.boxes for line in lines], np.float64)
    keep = ~np.isnan(boxes[:, 0])
    keep[[m.start() for m in _SPACE.finditer(text)]] = False  # as str.isspace
    return boxes[keep]


def grid_fragments(blocks: list[list[Line]]) -> list[Fragment]:
    """Every line's box and text for the numeric grids (``core.tables.grids``). A line
    that ends a figure with a hanging sign or unit or a joined currency sign
    (``FIGURE_END``) is cut into the figure's digits, the sign, the unit and the currency
    sign, so the figure's column is where its digits end, as in a right-aligned column."""
    out: list[Fragment] = []
    for lines in blocks:
        for line in lines:
            text = line.text
            tail = text[-1] in _FIGURE_TAIL or text.endswith(FIGURE_UNITS)
            end = FIGURE_END.search(text) if tail else None
            if end is None or end.lastindex is None:
                out.append((line.bbox, text))
                continue
            cuts = [0, *(end.start(g) for g in (1, 2, 3) if end.start(g) >= 0), len(text)]
            for a, b in itertools.pairwise(cuts):
                piece = text[a:b]
                a, b = a + len(piece) - len(piece.lstrip()), b - len(piece) + len(piece.rstrip())
                box = union_of(line.boxes[a:b]) if b > a else None
                if box is not None:
                    out.append((box, text[a:b]))
    return out


def merge_baselines(lines: list[Line]) -> list[Line]:
    """Consecutive lines on one baseline, left to right, become one line joined by a space
    (its font is the one of the longer part)."""
    out: list[Line] = [lines[0]]
    for line in lines[1:]:
        prev = out[-1]
        if line.horizontal and prev.horizontal and _same_row(prev, line):
            main = prev if len(prev.text) >= len(line.text) else line
            out[-1] = Line(
                f"{prev.text} {line.text}",
                [*prev.boxes, NAN_BOX, *line.boxes],
                bounding([prev.bbox, line.bbox]),
                main.font,
                main.size_pt,
                main.flags,
                confidence=_joined_confidence(prev, line),
            )
        else:
            out.append(line)
    return out


def _joined_confidence(a: Line, b: Line) -> float | None:
    """The confidence of two lines joined into one: their mean weighted by length (None
    when neither was read by OCR)."""
    if a.confidence is None and b.confidence is None:
        return None
    ca = a.confidence if a.confidence is not None else 1.0
    cb = b.confidence if b.confidence is not None else 1.0
    return round((ca * len(a.text) + cb * len(b.text)) / (len(a.text) + len(b.text)), 4)


def _same_row(a: Line, b: Line) -> bool:
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    height = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    return height > 0 and overlap >= 0.5 * height and b.bbox[0] >= a.bbox[2] - 1.0


def clean_line(parts: LineParts, rect: pymupdf.Rect) -> Line | None:
    """One line after the per-character rules, or ``None`` when nothing is left."""
    text, boxes, (x0, y0, x1, y1), horizontal, font, size, flags = parts
    tol = _EDGE_TOLERANCE_PT
    inside = x0 >= rect.x0 - tol and y0 >= rect.y0 - tol and x1 <= rect.x1 + tol
    inside = inside and y1 <= rect.y1 + tol
    plain = inside and not _NEEDS_CARE.search(text)
    stripped = text.strip(" ") if plain else text
    if plain and "  " not in stripped:
        # What ``_clean_chars`` makes of a line whose only whitespace is plain spaces,
        # none repeated inside: the text without edge spaces.
        if not stripped:
            return None
        if len(stripped) < len(text):
            first = len(text) - len(text.lstrip(" "))
            text = stripped
            boxes = boxes[first : first + len(stripped)]
            x0, y0, x1, y1 = _bounds(boxes)
    else:
        text, boxes = _clean_chars(text, boxes, None if inside else rect)
        if not text:
            return None
        x0, y0, x1, y1 = _bounds(boxes)
    return Line(text, boxes, (x0, y0, x1, y1), font, size, flags, horizontal)


def _bounds(boxes: list[BBox]) -> BBox:
    """``bounding`` of a line's character boxes (``stext_native.box_bounds``)."""
    found = stext_native.box_bounds(boxes)
    if found is None:
        raise ValueError("no box to bound")
    return found


def _clean_chars(
    text: str, char_boxes: list[BBox], clip: pymupdf.Rect | None
) -> tuple[str, list[BBox]]:
    """Per-character rules: drop controls and off-page glyphs, expand ligatures, turn
    lone surrogates into U+FFFD, fold whitespace runs to one space, strip the line's
    edges."""
    out: list[str] = []
    boxes: list[BBox] = []
    area = None if clip is None else Box(clip.x0, clip.y0, clip.x1, clip.y1)
    for c, box in zip(text, char_boxes, strict=True):
        if area is not None and not contains_centre(area, box):
            continue
        if c.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                boxes.append(box)
        elif c < " " or "\x7f" <= c <= "\x9f":
            continue
        elif "\ud800" <= c <= "\udfff":
            out.append(REPLACEMENT)
            boxes.append(box)
        elif c in LIGATURES:
            letters = LIGATURES[c]
            out.extend(letters)
            boxes.extend(_split_box(box, len(letters)))
        else:
            out.append(c)
            boxes.append(box)
    while out and out[-1] == " ":
        out.pop()
        boxes.pop()
    return "".join(out), boxes


def _split_box(box: BBox, parts: int) -> list[BBox]:
    x0, y0, x1, y1 = box
    step = (x1 - x0) / parts
    return [(x0 + i * step, y0, x0 + (i + 1) * step, y1) for i in range(parts)]


def hyphenated(line: str, following: str) -> bool:
    """A line-end hyphen after a letter, followed by a lowercase letter: a split word."""
    return len(line) >= 2 and line[-1] in HYPHENS and line[-2].isalpha() and following[0].islower()


def take_table_lines(
    lines: list[Line], regions: tuple[TableRegion, ...], table_lines: list[list[Line]]
) -> list[Line]:
    """Move lines whose centre lies in a table region to that region; return the rest."""
    rest: list[Line] = []
    for line in lines:
        for k, region in enumerate(regions):
            if region.holds(line.bbox):
                table_lines[k].append(line)
                break
        else:
            rest.append(line)
    return rest


def table_rows(lines: list[Line]) -> list[list[Line]]:
    """A table's lines as visual rows, each read left to right.

    A line joins the current row when its vertical centre lies within the row's first
    line; rows go top to bottom. (``find_tables`` cells are not used for this: where
    rulings are sparse one of its cells spans several printed rows.)
    """
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[1] + ln.bbox[3]) / 2):
        centre = (line.bbox[1] + line.bbox[3]) / 2
        if rows and rows[-1][0].bbox[1] <= centre <= rows[-1][0].bbox[3]:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [sorted(row, key=lambda ln: ln.bbox[0]) for row in rows]
