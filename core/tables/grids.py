"""Borderless numeric tables from a page's text lines alone: the cheap pass.

Financial statements print their tables without vertical rulings: a label column on the
left and columns of figures ("12,734", "(347)", "$", "—", "4.5%") whose right edges line
up. ``numeric_grids`` finds them in the line fragments ingest already has (no extra
PyMuPDF call), in about linear time in the fragments of the page (one sort):

1. fragments are grouped into printed rows and
2. a row is *numeric* when it holds figures enough (both in ``core.tables.grid_rows``,
   with what counts as a figure and a label; one-column tables need one numeric row more);
3. a *grid* is a run of rows, top to bottom, in which every numeric row shares at least
   ``MIN_VALUES`` right edges (``EDGE_TOLERANCE_PT``; or as many as the grid has) with
   the numeric rows before it, at most ``MAX_LABEL_ROWS`` rows of labels ("Costs and
   expenses:") sit between two numeric rows (a line of a comment column beside the
   figures, all of it right of the last column, is neither a label row nor an end), no
   sentence runs across the figure columns ("The following table shows ...") and no
   header row sits there ("12 Weeks Ended", short text with no percentage starting
   nearer the figures than the labels, left of the last column), and no gap between
   rows exceeds ``MAX_GAP_SHARE`` line heights (a statement's sections and its per-share
   lines sit up to two apart); it needs at least ``MIN_NUMERIC_ROWS`` numeric rows, at
   least half of them with a label (bare figures are a plot's axes or a matrix);
4. its *header rows* are the rows right above the first numeric row (gaps up to
   ``HEADER_GAP_SHARE`` line heights, or ``MAX_GAP_SHARE`` under a row of column headings
   set off from the first numeric row, at most ``MAX_HEADER_ROWS``), made of short
   fragments that reach into the figure columns (right of the leftmost figure of any of the
   grid's numeric rows) or start nearer them than the labels ("Three Months Ended",
   "July 2,", "2023"), set no larger than ``TITLE_SHARE`` times the first numeric row (a
   title is not a header); one label row ("Costs and expenses:") may sit between them and
   the first numeric row, none above a header row; the label column's own heading (one
   label, or one wrapped onto two lines) set off from the first row by up to
   ``MAX_GAP_SHARE`` line heights, with a row of column headings right on top of it, is
   the header's last row ("Sales to customers by / geographic area"), and a short row
   above a header row set in from the labels' left edge is a column's heading ("Global"
   over the 10-Q's "Revenues");
5. a grid that starts (header included) within ``MERGE_GAP_SHARE`` line heights below the
   previous one and shares most of its figure columns continues it, unless a sentence
   sits between them: one table printed in sections, each under a repeated header (the
   first header stays the table's).

Coordinates: boxes are in the page's unrotated text space (``rawdict``), points, y down.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from core.provenance.geometry import BBox, bounding
from core.tables.grid_rows import MIN_VALUES, Fragment, Row, printed_rows

MIN_NUMERIC_ROWS = 3
MAX_LABEL_ROWS = 3
MAX_GAP_SHARE = 2.0
HEADER_GAP_SHARE = 0.9
WRAP_GAP_SHARE = 0.5
MAX_HEADER_ROWS = 8
MERGE_GAP_SHARE = 3.0
MAX_LABEL_CHARS = 80
MAX_HEADER_FRAGMENT_CHARS = 48
TITLE_SHARE = 1.4
EDGE_TOLERANCE_PT = 4.0
_SLACK_PT = 1e-6  # a bisected range is widened by this; the exact test decides


@dataclass(frozen=True, slots=True, kw_only=True)
class Grid:
    """A numeric grid: its box, the box of its header rows (``None``: no header), its
    rows and its figure columns (right edges that differ by more than the tolerance)."""

    bbox: BBox
    header_bbox: BBox | None
    rows: int
    columns: int = 1


def _shared(edges: list[float], ordered: list[float]) -> int:
    """How many of ``edges`` lie within the tolerance of a column edge (``ordered``:
    the column edges, sorted)."""
    return sum(1 for e in edges if _near(e, ordered))


def _near(edge: float, ordered: list[float]) -> bool:
    tol = EDGE_TOLERANCE_PT
    k = bisect.bisect_left(ordered, edge - tol - _SLACK_PT)
    while k < len(ordered) and ordered[k] <= edge + tol + _SLACK_PT:
        if abs(edge - ordered[k]) <= tol:  # the exact test; the bisection only narrows
            return True
        k += 1
    return False


def numeric_grids(fragments: Sequence[Fragment]) -> list[Grid]:
    """The numeric grids of one page's line fragments (see the module docstring)."""
    rows = printed_rows(fragments)
    spans: list[tuple[int, int, int, list[float]]] = []  # header start, first, end, columns
    k = 0
    while k < len(rows):
        if not rows[k].values:
            k += 1
            continue
        end, count, columns = _grid_end(rows, k)
        if count < 0:
            k = end  # a run of bare figures: skipped whole, so a page costs linear time
            continue
        if count < MIN_NUMERIC_ROWS + (len(columns) == 1):
            k += 1
            continue
        start, first = _header_start(rows, k, end)
        previous = spans[-1] if spans else None
        if previous is not None and _continues(rows, previous, start, columns):
            spans[-1] = (previous[0], previous[1], end, previous[3] + columns)
        else:
            spans.append((max(start, previous[2] if previous else 0), first, end, columns))
        k = end
    return [
        Grid(
            bbox=_box(rows[start:end]),
            header_bbox=_box(rows[start:first]) if first > start else None,
            rows=end - start,
            columns=len(columns),
        )
        for start, first, end, columns in spans
    ]


def _continues(
    rows: list[Row], previous: tuple[int, int, int, list[float]], start: int, columns: list[float]
) -> bool:
    """A grid right below the previous one (its header included) with shared columns is
    the same table printed in sections, each under a repeated header; a sentence between
    them ("The following table ...") introduces another table."""
    above, below = rows[previous[2] - 1], rows[start]
    close = below.top - above.bottom <= MERGE_GAP_SHARE * max(above.height, below.height)
    left = min(row.figures_left for row in rows[previous[1] : previous[2]] if row.values)
    return (
        start <= previous[2] + MAX_HEADER_ROWS
        and close
        and _shared(columns, sorted(previous[3])) >= _continued_columns(columns, previous[3])
        and not any(_prose(row, left) for row in rows[previous[2] : start])
    )


def _continued_columns(columns: list[float], previous: list[float]) -> int:
    """How many figure columns a grid must share with the one above to continue it: most
    of the narrower one's (a table printed in sections repeats its columns; the next
    table under a like header sets its own, PepsiCo's 2022 reconciliation under its
    2023 one)."""
    return max(MIN_VALUES, -(-min(len(columns), len(previous)) // 2))


def _grid_end(rows: list[Row], start: int) -> tuple[int, int, list[float]]:
    """(index after the grid's last numeric row, its numeric row count, its column
    edges) from ``start``; the count is -1 when fewer than half its rows have a label."""
    columns = list(rows[start].values)
    ordered = sorted(columns)
    figures_left = rows[start].figures_left
    labels_left = rows[start].left
    last, count, labels = start, 1, 0
    labelled = int(rows[start].label is not None)
    for k in range(start + 1, len(rows)):
        row, previous = rows[k], rows[k - 1]
        if row.top - previous.bottom > MAX_GAP_SHARE * max(row.height, previous.height):
            break
        edges = row.values
        if edges and _shared(edges, ordered) >= min(MIN_VALUES, len(edges), len(ordered)):
            for e in edges:  # each new edge is a column for the edges after it
                if not _near(e, ordered):
                    columns.append(e)
                    bisect.insort(ordered, e)
            last, count, labels = k, count + 1, 0
            figures_left = min(figures_left, row.figures_left)
            labels_left = min(labels_left, row.left)
            labelled += row.label is not None
            continue
        if _beside(row, ordered[-1]):
            continue  # a comment column's line beside the figures: neither label nor end
        labels += 1
        if labels > MAX_LABEL_ROWS or (edges and _shared(edges, ordered) == 0):
            break
        if _prose(row, figures_left):
            break  # a sentence across the figure columns ("The following table ..."):
            # the table has ended; a table printed in sections continues by its header
        if _over_figures(row, (labels_left + figures_left) / 2, ordered[-1]):
            break  # a header ("12 Weeks Ended"): another table, or this one's next section
    # a grid of bare figures (a plot's axes, a matrix) is no table: most rows have labels
    return last + 1, count if 2 * labelled >= count else -1, columns


def _beside(row: Row, right: float) -> bool:
    """Every fragment of the row starts right of ``right``, the last figure column's
    edge: a line of a comment column beside the table ("Operational Results
    Commentary"), not a row of labels."""
    return row.left > right


def _header_like(row: Row, middle: float) -> bool:
    """Short text that starts right of ``middle``, half-way from the labels to the
    figures: nearer the figure columns than the labels, with no percentage in it (a
    header says "% Change"; "Down 1 %", its digits cut from the sign, is a value)."""
    if row.left <= middle or any(_long(text) for _, text in row.fragments):
        return False
    return not any(text == "%" for _, text in row.fragments)


def _over_figures(row: Row, middle: float, right: float) -> bool:
    """A header row (``_header_like``) that starts left of the last column's edge
    ``right`` (a column of comments right of the figures starts past them, and runs in
    longer lines)."""
    return _header_like(row, middle) and row.left < right


def _prose(row: Row, figures_left: float) -> bool:
    """A row with a fragment longer than a header's that runs from left of the figure
    columns into them: a sentence across the table ("The following table shows ..."),
    not a row of it (a column of comments right of the figures is one)."""
    return any(box[0] < figures_left < box[2] and _long(text) for box, text in row.fragments)


def _sentence(text: str) -> bool:
    """Words ending in a full stop ("Amounts may not add due to rounding."), not an
    abbreviation in a column heading ("Accum. Other Comp.")."""
    return text.endswith(".") and len(text.split()) >= 3


def _long(text: str) -> bool:
    """Longer than a header's fragment: a sentence."""
    return len(text.strip()) > MAX_HEADER_FRAGMENT_CHARS


def _header_start(rows: list[Row], first: int, end: int) -> tuple[int, int]:
    """(first header row, first body row) above the numeric row ``first``: up to
    ``MAX_LABEL_ROWS`` label rows (left of the figures) belong to the body, the short
    rows above them that reach into the figure columns are the header."""
    numeric = [row for row in rows[first:end] if row.values]
    figures_left = min(row.figures_left for row in numeric)
    labels_left = min(row.left for row in numeric)
    middle = (labels_left + figures_left) / 2
    k, body, labels = first, first, 0
    while k > 0 and body - k < MAX_HEADER_ROWS:
        row, below = rows[k - 1], rows[k]
        gap = (below.top - row.bottom) / max(row.height, below.height)
        set_off = k == first and gap <= MAX_GAP_SHARE and _headings(row, middle)
        if k == first and gap > HEADER_GAP_SHARE and gap <= MAX_GAP_SHARE:
            stub = _stub_head(rows, k - 1, middle, figures_left)
            if stub is not None:
                k = stub  # the label column's heading, at the header's foot
                continue
        if gap > HEADER_GAP_SHARE and not set_off:
            break  # too far above, unless column headings set off from the first row
        texts = [text.strip() for _, text in row.fragments]
        if any(_sentence(t) for t in texts) or row.height > TITLE_SHARE * rows[first].height:
            break  # a sentence, or a title set larger than the table
        left_of_figures = max(box[2] for box, _ in row.fragments) < figures_left
        if left_of_figures and row.left <= middle:
            if k < body and row.left > labels_left + EDGE_TOLERANCE_PT:
                k -= 1  # over a header row and set in from the labels: a column's
                continue  # heading ("Global" over "Revenues"), not a label
            if k < first or labels >= MAX_LABEL_ROWS or len(texts) > 1:
                break
            if any(len(t) > MAX_LABEL_CHARS for t in texts):
                break
            labels += 1
            k -= 1
            body = k
            continue
        if any(_long(t) for t in texts):
            break
        k -= 1
    return k, body


def _stub_head(rows: list[Row], last: int, middle: float, figures_left: float) -> int | None:
    """The first row of the label column's heading ending at row ``last`` (one label, or
    one wrapped onto two lines: "Sales to customers by / geographic area"), set off from
    the table's first row, when a row of column headings sits right on top of it (J&J's
    "2022 2021 Total Operations Currency ..."); else ``None``."""
    top = last
    if top > 0 and _wrapped(rows[top - 1], rows[top]):
        top -= 1
    if top == 0 or any(not _label_like(rows[j], middle, figures_left) for j in (top, last)):
        return None
    above, stub = rows[top - 1], rows[top]
    tight = stub.top - above.bottom <= HEADER_GAP_SHARE * max(stub.height, above.height)
    return top if tight and _headings(above, middle) else None


def _label_like(row: Row, middle: float, figures_left: float) -> bool:
    """One short fragment left of the figures, starting among the labels."""
    if len(row.fragments) != 1 or row.left > middle:
        return False
    box, text = row.fragments[0]
    return box[2] < figures_left and len(text.strip()) <= MAX_LABEL_CHARS


def _wrapped(row: Row, below: Row) -> bool:
    """``below`` continues ``row``'s text: the same left edge, set tight under it."""
    tight = below.top - row.bottom <= WRAP_GAP_SHARE * max(row.height, below.height)
    return abs(row.left - below.left) <= 1.0 and tight


def _headings(row: Row, middle: float) -> bool:
    """Column headings: two or more fragments of a header-like row (a ruled header set
    off from the body: J&J's "Consumer Health … Total")."""
    return len(row.fragments) >= 2 and _header_like(row, middle)


def _box(rows: Sequence[Row]) -> BBox:
    return bounding(box for row in rows for box, _ in row.fragments)
