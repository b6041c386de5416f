"""Block typing of the fast parser measured against PyMuPDF's layout model.

The layout model (``core.parse.layout``) is the reference; it is slow (about a second a
page on a CPU), so its regions are computed once per document version and kept in
``tests/data/layout_reference.json`` keyed by file name and checked by sha256
(``CHUNKSCOPE_REFERENCE_REBUILD=1`` recomputes them). Scores per document:

* table recall / precision: a fast ``table`` block and a layout ``table`` region match
  when their boxes (page space, points) overlap with IoU >= ``MATCH_IOU``; each
  reference table matches at most one block (greedy by IoU);
* heading precision: the share of fast ``heading`` blocks most of whose lines the layout
  model puts in a ``title`` or ``section-header`` region;
* furniture recall: the share of the lines the layout model puts in a ``page-header`` or
  ``page-footer`` region that the fast parser puts in a ``header``/``footer`` block.

Lines go to regions as in the layout parser: a line belongs to the region that covers
most of its box, at least half.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core import settings
from core.bench.inputs import ROOT
from core.parse.layout import Region, best_region, layout_regions
from core.provenance.geometry import iou
from core.provenance.types import BBox, Block, Document

MATCH_IOU = 0.5
REFERENCE_JSON = ROOT / "tests" / "data" / "layout_reference.json"
FINANCEBENCH = (
    "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf",
    "MGMRESORTS_2022Q4_EARNINGS.pdf",
    "PEPSICO_2023Q1_EARNINGS.pdf",
    "Pfizer_2023Q2_10Q.pdf",
)
TABLE_PDFS = (
    "plumber_nics-background-checks-2015-11.pdf",
    "plumber_WARN-Report-for-7-1-2015-to-03-25-2016.pdf",
    "GeoBase_NHNC1_Data_Model_UML_EN.pdf",
)
_HEADING_CLASSES = frozenset({"title", "section-header"})
_FURNITURE_CLASSES = frozenset({"page-header", "page-footer"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """The layout model's regions of one document version, and its time in seconds."""

    name: str
    sha256: str
    regions: dict[int, list[Region]]
    elapsed_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Quality:
    """Counts behind the scores of one document (see the module docstring)."""

    name: str
    pages: int
    tables_ref: int
    tables_ours: int
    tables_matched: int
    headings_ours: int
    headings_confirmed: int
    furniture_ref_lines: int
    furniture_found_lines: int

    @property
    def table_recall(self) -> float | None:
        return self.tables_matched / self.tables_ref if self.tables_ref else None

    @property
    def table_precision(self) -> float | None:
        return self.tables_matched / self.tables_ours if self.tables_ours else None

    @property
    def heading_precision(self) -> float | None:
        return self.headings_confirmed / self.headings_ours if self.headings_ours else None

    @property
    def furniture_recall(self) -> float | None:
        if not self.furniture_ref_lines:
            return None
        return self.furniture_found_lines / self.furniture_ref_lines

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "pages": self.pages,
            "tables_ref": self.tables_ref,
            "tables_ours": self.tables_ours,
            "tables_matched": self.tables_matched,
            "table_recall": self.table_recall,
            "table_precision": self.table_precision,
            "headings_ours": self.headings_ours,
            "heading_precision": self.heading_precision,
            "furniture_ref_lines": self.furniture_ref_lines,
            "furniture_recall": self.furniture_recall,
        }


def reference_for(doc: Document, name: str, *, store: Path = REFERENCE_JSON) -> Reference:
    """The layout regions of ``doc`` from ``store`` when its sha256 matches, else computed
    by the layout model (and written back into ``store``)."""
    stored = stored_reference(name, doc.sha256, store=store)
    if stored is not None and not settings.REFERENCE_REBUILD.read():
        return stored
    cached = _read(store)
    started = time.perf_counter()
    regions = layout_regions(doc)
    elapsed = time.perf_counter() - started
    cached[name] = {
        "sha256": doc.sha256,
        "elapsed_s": round(elapsed, 2),
        "regions": {
            str(page): [[*(round(v, 2) for v in box), cls] for box, cls in boxes]
            for page, boxes in regions.items()
        },
    }
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(cached, indent=None, sort_keys=True) + "\n", encoding="utf-8")
    return Reference(name=name, sha256=doc.sha256, regions=regions, elapsed_s=elapsed)


def stored_reference(name: str, sha256: str, *, store: Path = REFERENCE_JSON) -> Reference | None:
    """The kept reference of this document version, or ``None`` (absent or other bytes)."""
    entry = _read(store).get(name)
    if not entry or entry["sha256"] != sha256:
        return None
    regions = {
        int(page): [(tuple(box), cls) for *box, cls in boxes]
        for page, boxes in entry["regions"].items()
    }
    return Reference(name=name, sha256=sha256, regions=regions, elapsed_s=entry["elapsed_s"])


def _read(store: Path) -> dict[str, dict]:
    if not store.is_file():
        return {}
    return json.loads(store.read_text(encoding="utf-8"))


def score(doc: Document, blocks: Sequence[Block], reference: Reference) -> Quality:
    """Scores of the fast parser's ``blocks`` of ``doc`` against ``reference``."""
    ref_tables = [
        (page, box)
        for page, regions in reference.regions.items()
        for box, cls in regions
        if cls == "table"
    ]
    ours = [(b.page, b.bbox_pt) for b in blocks if b.kind == "table" and b.bbox_pt]
    classes = _line_classes(doc, reference)
    headings = [b for b in blocks if b.kind == "heading"]
    confirmed = sum(1 for b in headings if _mostly(classes, doc, b, _HEADING_CLASSES))
    furniture = [i for i, cls in enumerate(classes) if cls in _FURNITURE_CLASSES]
    furniture_spans = [(b.char_start, b.char_end) for b in blocks if b.kind in ("header", "footer")]
    found = sum(1 for i in furniture if _inside(doc.lines[i].char_start, furniture_spans))
    return Quality(
        name=reference.name,
        pages=len(doc.pages),
        tables_ref=len(ref_tables),
        tables_ours=len(ours),
        tables_matched=_matches(ref_tables, ours),
        headings_ours=len(headings),
        headings_confirmed=confirmed,
        furniture_ref_lines=len(furniture),
        furniture_found_lines=found,
    )


def _matches(ref: Sequence[tuple[int, BBox]], ours: Sequence[tuple[int, BBox]]) -> int:
    """Greedy one-to-one matching by IoU >= ``MATCH_IOU`` on the same page."""
    pairs = sorted(
        (
            (iou(rb, ob), r, o)
            for r, (rp, rb) in enumerate(ref)
            for o, (op, ob) in enumerate(ours)
            if rp == op
        ),
        reverse=True,
    )
    used_ref: set[int] = set()
    used_ours: set[int] = set()
    for value, r, o in pairs:
        if value < MATCH_IOU:
            break
        if r not in used_ref and o not in used_ours:
            used_ref.add(r)
            used_ours.add(o)
    return len(used_ref)


def _line_classes(doc: Document, reference: Reference) -> list[str | None]:
    """The layout class of every line of ``doc`` (``None``: no region covers it)."""
    out: list[str | None] = []
    for line in doc.lines:
        regions = reference.regions.get(line.page, [])
        slot = best_region(line, regions)
        out.append(regions[slot][1] if slot >= 0 else None)
    return out


def _mostly(classes: list[str | None], doc: Document, block: Block, wanted: Iterable[str]) -> bool:
    wanted = frozenset(wanted)
    inside = [
        classes[i]
        for i, line in enumerate(doc.lines)
        if block.char_start <= line.char_start < block.char_end
    ]
    return bool(inside) and 2 * sum(1 for c in inside if c in wanted) > len(inside)


def _inside(position: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(s <= position < e for s, e in spans)
