"""Offsets and pages checked in the per-page loader's own text (``core.imported.loader_text``).

``find_in_loader`` says, for one chunk, where its text is in the loader's text: on its
claimed page at its claimed offset, elsewhere on that page, or on another page. Offsets
are checked both in the page text as extracted (LlamaIndex's ``PDFReader``) and stripped
(LangChain's loaders strip each page), so either loader's offset holds where it is right.

``choose_extractor`` finds the extractor a set was made with: the one its rows' metadata
names, else each known one tried on a sample, kept when at least half the sampled chunks'
texts are on their claimed pages in its text (the one whose offsets hold most wins).
``page_shift`` finds whether a set numbers its pages from 0 or 1, by the same evidence
(or, without a loader, by the pages where the chunks' texts occur in our text).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.imported.loader_text import EXTRACTORS, PageTexts
from core.imported.shapes import ForeignChunk
from core.provenance.types import Document

SAMPLE = 40  # chunks sampled to find the extractor and the page numbering
_FOUND_SHARE = 0.5  # share of sampled texts an extractor must find on their pages


@dataclass(frozen=True, slots=True, kw_only=True)
class LoaderFind:
    """Where a chunk's text is in the loader's text.

    ``page``: the page whose loader text holds it (its claimed page first), ``None`` when
    none does; ``at``: its offset in that page's text (stripped, as LangChain's loaders
    give it); ``length``: that text's length; ``holds``: the claimed offset points at it
    there; ``on_claimed``: it is on the claimed page."""

    page: int | None
    at: int | None
    length: int
    holds: bool
    on_claimed: bool


def _holds(raw: str, inner: str, lead_chunk: int, claimed: int) -> bool:
    """Whether ``claimed`` (into ``raw``, or into ``raw`` stripped) points at ``inner``."""
    lead_page = len(raw) - len(raw.lstrip())
    for base in (0, lead_page):
        for first in (base + claimed + lead_chunk, base + claimed):
            if claimed >= 0 and raw[first : first + len(inner)] == inner:
                return True
    return False


def _nearest(raw: str, inner: str, claimed: int | None) -> int | None:
    """The occurrence of ``inner`` in ``raw`` nearest the claim (the first without one)."""
    found: list[int] = []
    start = raw.find(inner)
    while start >= 0 and len(found) < 200:
        found.append(start)
        start = raw.find(inner, start + 1)
    if not found:
        return None
    if claimed is None:
        return found[0]
    return min(found, key=lambda p: abs(p - claimed))


def find_in_loader(
    pages: PageTexts, chunk: ForeignChunk, *, search_all: bool = True
) -> LoaderFind | None:
    """Where ``chunk``'s text is in ``pages`` (see ``LoaderFind``); ``None`` when the
    chunk claims no page or its claimed page has no loader text. ``search_all``: look on
    the other pages when it is not on its claimed one (nearest pages first)."""
    if chunk.page is None:
        return None
    own = pages.page(chunk.page)
    if own is None:
        return None
    inner = chunk.text.strip()
    lead = len(chunk.text) - len(chunk.text.lstrip())
    claimed = chunk.claimed_start
    page: int = chunk.page
    order = [page]
    if search_all:
        others = [n for n in range(1, pages.count + 1) if n != page]
        order += sorted(others, key=lambda n: abs(n - page))
    for number in order:
        raw = pages.page(number)
        if raw is None:
            continue
        holds = claimed is not None and _holds(raw, inner, lead, claimed)
        stripped = raw.strip()
        at = _nearest(stripped, inner, claimed)
        if at is None and not holds:
            continue
        if holds and claimed is not None:
            at = claimed if stripped[claimed : claimed + len(inner)] == inner else at
        return LoaderFind(
            page=number, at=at, length=len(stripped), holds=holds,
            on_claimed=number == chunk.page,
        )  # fmt: skip
    return LoaderFind(page=None, at=None, length=len(own.strip()), holds=False, on_claimed=False)


def shifted(chunks: Sequence[ForeignChunk], shift: int) -> list[ForeignChunk]:
    """The chunks with every page moved by ``shift`` (another numbering of the same pages)."""
    if not shift:
        return list(chunks)
    return [c if c.page is None else replace(c, page=c.page + shift) for c in chunks]


def _sample(chunks: Sequence[ForeignChunk]) -> list[ForeignChunk]:
    paged = [c for c in chunks if c.page is not None]
    step = max(1, len(paged) // SAMPLE)
    return paged[::step][:SAMPLE]


def _score(pages: PageTexts, sample: Sequence[ForeignChunk]) -> tuple[int, int]:
    """(texts found on their claimed page, claimed offsets that hold there)."""
    found = holds = 0
    for chunk in sample:
        where = find_in_loader(pages, chunk, search_all=False)
        if where is not None and where.on_claimed:
            found += 1
            holds += where.holds
    return found, holds


def choose_extractor(
    doc: Document, chunks: Sequence[ForeignChunk], order: Sequence[str], shifts: Sequence[int],
    folder: Path | None = None,
) -> tuple[PageTexts | None, int, list[str]]:  # fmt: skip
    """The extractor's pages (of ``order``; the pages read so far kept) and page shift (of
    ``shifts``) under which the sampled chunks' texts are on their claimed pages;
    ``(None, 0, tried)`` when none reproduces them. ``tried``: the extractors tried;
    ``folder``: where extracted pages are kept (``PageTexts``)."""
    tried: list[str] = []
    best: tuple[tuple[int, int], PageTexts, int] | None = None
    for name in order:
        if name not in EXTRACTORS:
            continue
        pages = PageTexts(doc, name, folder)
        if not pages.usable:
            return None, 0, tried
        tried.append(name)
        for shift in shifts:
            sample = _sample(shifted(chunks, shift))
            if not sample:
                return None, 0, tried
            found, holds = _score(pages, sample)
            if found >= _FOUND_SHARE * len(sample) and (best is None or (holds, found) > best[0]):
                best = ((holds, found), pages, shift)
        if best is not None and best[0][0] >= _FOUND_SHARE * len(_sample(chunks)):
            break  # its offsets hold: no need to try the next extractor
    if best is None:
        return None, 0, tried
    return best[1], best[2], tried


def page_shift_by_places(
    chunks: Sequence[ForeignChunk], shifts: Sequence[int],
    pages_of_text: Callable[[ForeignChunk], set[int]],
) -> int:  # fmt: skip
    """The shift under which most sampled chunks' texts occur on their page in our text
    (``pages_of_text``: the pages a chunk's text occurs on); the first shift on a tie."""
    sample = _sample(chunks)
    if not sample:
        return shifts[0]
    found = {c.index: pages_of_text(c) for c in sample}
    scores = [(sum((c.page or 0) + s in found[c.index] for c in sample), -k, s)
              for k, s in enumerate(shifts)]  # fmt: skip
    return max(scores)[2]
