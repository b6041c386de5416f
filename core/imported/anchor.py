"""Anchor imported chunks in a document's canonical text, and audit the offsets they claim.

Every chunk gets an **anchor** (its span in ``doc.text``):

* ``exact``: the chunk's text, its outer whitespace aside, is a slice of the canonical
  text;
* ``aligned``: it differs from ours by extraction: spacing and line joins (found as a
  whitespace-free match of every character), or hyphenation, ligatures, reading order
  (found by word alignment, ``core.align.window``, at ``threshold`` of its words); its
  ``coverage`` is the share of its words inside the span;
* ``ambiguous``: the text occurs more than once and nothing decides which occurrence;
* ``missing``: not found (word coverage under ``threshold``).

A text found in several places is placed by what the import says, in this order: its
page; the order of its neighbours (chunks come in document order, so a chunk starts no
earlier than the chunk before it and no later than the next chunk found in one place,
used only when the chunks found in one place do come in order); its claimed offset where
the claim can be checked. A piece of evidence that rules out every place is set aside.

Every chunk also gets a **claim** verdict on the offset it came with:

* ``ok``: the claimed offset points at the chunk's text, at the place it was anchored;
* ``wrong``: it points elsewhere (``detail`` says where it points and where the text is);
* ``absent``: the import carries no offset;
* ``unchecked``: the offset refers to a text we do not have (a per-page loader's own
  extraction): claims are checkable in text and Markdown files, whose canonical text is
  the file as read by Python (what a loader reads), and anywhere they hold our text;
* ``pending``: the offset is into a per-page loader's text that has not been read yet
  (``anchor_document(..., pending=True)``: the import placed the chunk by our text first
  and checks its claims afterwards, ``core.imported.claim_check``). Its page claim is
  ``pending`` too: the loader's text decides both, and until it is read neither is shown
  as right or wrong.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import partial
from typing import Literal

from core.align.exact import SampledIndex, View, exact_candidates, whitespace_free_view
from core.align.window import align_words
from core.align.words import Word, words_of
from core.imported.loader_check import LoaderFind, find_in_loader
from core.imported.loader_text import PageTexts, extractor_label
from core.imported.shapes import ForeignChunk
from core.provenance.types import Document

AnchorKind = Literal["exact", "aligned", "ambiguous", "missing"]
ClaimKind = Literal["ok", "wrong", "absent", "unchecked", "pending"]
PageClaimKind = Literal["ok", "wrong", "absent", "unchecked", "pending"]
ANCHORS: tuple[AnchorKind, ...] = ("exact", "aligned", "ambiguous", "missing")
CLAIMS: tuple[ClaimKind, ...] = ("ok", "wrong", "absent", "unchecked", "pending")
PAGE_CLAIMS: tuple[PageClaimKind, ...] = ("ok", "wrong", "absent", "unchecked", "pending")
PENDING_DETAIL = "its offset and page are checked in the loader's text once that is read"
DEFAULT_THRESHOLD = 0.9
CHECKABLE_KINDS = frozenset({"text", "markdown"})  # canonical text == the file as read
_MAX_PLACES = 200  # a text found in more places than this is ambiguous without more look
_ORDERED_SHARE = 0.9
WIDE_SPAN = 1.5  # an aligned span past this many times its chunk's length says so
NARROW_SPAN = 1.2  # past this, a loader-checked chunk is also placed by the loader's text
_CHAR_RUN = 4  # characters in a row that count as lined up, placing by characters
_MOVED_RUN = 12  # ... and, for a piece found out of order, characters in a row
_CHAR_MARGIN = 200  # characters of ours looked at past a loader-placed chunk's lined-up words


def span_ratio(span: str, chunk: str) -> float:
    """The span's length against the chunk's, whitespace aside (extractions space a
    table's cells differently)."""
    return len("".join(span.split())) / max(1, len("".join(chunk.split())))


@dataclass(frozen=True, slots=True, kw_only=True)
class Anchor:
    """Where one imported chunk lies in ``doc_id``'s canonical text, and the verdict on its
    claim. ``char_start``/``char_end`` are set for ``exact`` and ``aligned`` only;
    ``places`` counts where its text occurs (0 when it was aligned or is missing);
    ``detail``: one line for anything but an ``exact`` anchor with an ``ok`` claim."""

    index: int
    doc_id: str | None
    doc_sha256: str | None
    anchor: AnchorKind
    char_start: int | None
    char_end: int | None
    coverage: float | None
    pages: tuple[int, ...]
    claim: ClaimKind
    claimed_start: int | None
    places: int
    detail: str
    page_claim: PageClaimKind = "absent"
    claimed_page: int | None = None

    @property
    def anchored(self) -> bool:
        return self.char_start is not None


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... ``11th``, ``21st``."""
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


@dataclass(slots=True)
class _Found:
    places: list[tuple[int, int]]
    chosen: tuple[int, int] | None = None
    coverage: float | None = None
    how: str = ""


class DocumentText:
    """One document's canonical text with its whitespace-free view and word lists, built
    once and reused by every anchoring in that document (``anchor_document``'s ``text``)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.text = doc.text
        self.view: View = whitespace_free_view(doc.text, 0, len(doc.text))
        self._words: list[Word] | None = None
        self._starts: list[int] = []
        self._page_words: dict[int, list[Word]] = {}
        self._page_starts: dict[int, list[int]] = {}
        self._index: SampledIndex | None = None  # built when a chunk is first looked for

    def places(self, text: str, page: int | None) -> list[tuple[int, int]]:
        """Where the text occurs (spacing aside): on whole words, else (a chunk a window
        cut mid-word) anywhere; past ``_MAX_PLACES`` places, only on its page and the
        next, when it has one."""
        region = self.page_region(page)
        everywhere = self._places(text, None)
        local: tuple[list[tuple[int, int]], list[tuple[int, int]]] | None = None
        for kind in (0, 1):  # on whole words, else anywhere
            found = everywhere[kind]
            if len(found) > _MAX_PLACES and region is not None:
                local = local or self._places(text, region)
                found = local[kind]
            if found:
                return found
        return []

    def _places(
        self, text: str, within: tuple[int, int] | None
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The places on whole words and anywhere, each up to ``_MAX_PLACES`` + 1 (one
        scan of the text)."""
        whole: list[tuple[int, int]] = []
        anywhere: list[tuple[int, int]] = []
        if self._index is None:
            self._index = SampledIndex(self.view.text)
        for start, end, edges in exact_candidates(self.text, self.view, text.split(),
                                                  (0, len(self.text)), within=within,
                                                  index=self._index):  # fmt: skip
            if len(anywhere) <= _MAX_PLACES:
                anywhere.append((start, end))
            if edges:
                whole.append((start, end))
                if len(whole) > _MAX_PLACES:
                    break
        return whole, anywhere

    def words(self, start: int, end: int) -> list[Word]:
        """The document's words that lie inside ``[start, end)``: a paged document's read
        page by page as needed, a reflowable one's all at once, then sliced."""
        if self.doc.is_paged:
            found: list[Word] = []
            for number in self.doc.pages_of(start, end):
                if number not in self._page_words:
                    page = self.doc.pages[number - 1]
                    self._page_words[number] = words_of(self.text, page.char_start, page.char_end)
                    self._page_starts[number] = [w.char_start for w in self._page_words[number]]
                own, starts = self._page_words[number], self._page_starts[number]
                first = bisect.bisect_left(starts, start)
                last = bisect.bisect_left(starts, end)
                while last > first and own[last - 1].char_end > end:  # words do not overlap
                    last -= 1
                found += own[first:last]
            return found
        if self._words is None:
            self._words = words_of(self.text)
            self._starts = [w.char_start for w in self._words]
        first = bisect.bisect_left(self._starts, start)
        last = bisect.bisect_left(self._starts, end)
        while last > first and self._words[last - 1].char_end > end:
            last -= 1
        return self._words[first:last]

    def page_region(self, page: int | None) -> tuple[int, int] | None:
        """The page's span, and the next page's, where a chunk may run on."""
        if page is None or not self.doc.is_paged or not 1 <= page <= len(self.doc.pages):
            return None
        last = self.doc.pages[min(page, len(self.doc.pages) - 1)]
        return self.doc.pages[page - 1].char_start, last.char_end


def _narrow(places: list[tuple[int, int]], keep: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``keep`` when it leaves something: evidence that rules out every place is set aside."""
    return keep if keep else places


def _ordered(found: Sequence[_Found]) -> bool:
    starts = [f.places[0][0] for f in found if len(f.places) == 1]
    if len(starts) < 2:
        return True
    rising = sum(b >= a for a, b in zip(starts, starts[1:], strict=False))
    return rising >= _ORDERED_SHARE * (len(starts) - 1)


def _claim_checkable(doc: Document) -> bool:
    return doc.kind in CHECKABLE_KINDS


def _claimed_place(doc: Document, chunk: ForeignChunk, start: int) -> tuple[int, int] | None:
    """The stripped span the claim points at, when it holds the text."""
    inner = chunk.text.strip()
    lead = len(chunk.text) - len(chunk.text.lstrip())
    for first in (start + lead, start):
        if first >= 0 and doc.text[first : first + len(inner)] == inner:
            return first, first + len(inner)
    return None


def _choose(
    text: DocumentText, chunk: ForeignChunk, found: _Found, after: int, before: int | None,
    rel: float | None = None,
) -> None:  # fmt: skip
    """Decide among several places (page, neighbours' order, claim, the place on its page
    the loader's text puts it at) or leave it open."""
    places = found.places
    region = text.page_region(chunk.page)
    if region is not None:
        places = _narrow(places, [p for p in places if region[0] <= p[0] < region[1]])
    if len(places) > 1:
        inside = [p for p in places if p[0] >= after and (before is None or p[0] <= before)]
        places = _narrow(places, inside)
    if len(places) > 1 and chunk.claimed_start is not None:
        claimed = _claimed_place(text.doc, chunk, chunk.claimed_start)
        if claimed is not None and (_claim_checkable(text.doc) or claimed in places):
            places = _narrow(places, [p for p in places if p == claimed])
    if len(places) > 1 and rel is not None and chunk.page is not None and region is not None:
        page = text.doc.pages[chunk.page - 1]
        size = max(1, page.char_end - page.char_start)
        own = [p for p in places if page.char_start <= p[0] < page.char_end]
        if own:
            places = [min(own, key=lambda p: abs((p[0] - page.char_start) / size - rel))]
    if len(places) == 1:
        found.chosen = places[0]
        found.coverage = 1.0


def _align(
    text: DocumentText, chunk: ForeignChunk, found: _Found, after: int, before: int | None,
    threshold: float, page_known: bool = False,
    by_loader: Callable[[], tuple[int, int, float, str] | None] | None = None,
) -> None:  # fmt: skip
    """Word alignment, nearest evidence first: just after the chunk before it (imports
    come in order), then its page and the next; the whole text for a chunk without a page,
    or whose words are not on its page (its page claim is then wrong: a chunk whose words
    are all there, in another order, is not looked for elsewhere). A chunk the
    loader's text puts on its page (``page_known``) is placed there even when its words
    come in another order, spread over up to four times its length, else (``by_loader``)
    where the loader's text of the page, word-aligned with ours, puts its words."""
    size = len(text.text)
    page = text.page_region(chunk.page)
    if page is not None and page_known and chunk.page is not None:  # a loader's page: no run-on
        own = text.doc.pages[chunk.page - 1]
        page = (own.char_start, own.char_end)
    regions: list[tuple[int, int]] = []
    if after > 0 or before is not None:
        regions.append((after, min(size, after + 3 * len(chunk.text) + 200)))
    regions.append(page if page is not None else (0, size))
    options: list[tuple[int, int, float, str]]
    for region in dict.fromkeys(regions):
        result = align_words(text.text, text.words(*region), chunk.text, threshold, best=False)
        start, end = result.char_start, result.char_end
        if start is None or end is None:
            continue
        if page is not None and not page[0] <= start < page[1]:
            continue
        if page_known and page is not None and end > page[1]:
            continue
        options = [(start, end, result.coverage, "words")]
        if by_loader is not None and span_ratio(text.text[start:end], chunk.text) > NARROW_SPAN:
            span = by_loader()  # wider than its chunk: the loader's text may place it tighter
            if span is not None and span[2] >= threshold:
                options.append(span)
        start, end, coverage, how = min(options, key=lambda o: o[1] - o[0])
        found.chosen, found.coverage, found.how = (start, end), coverage, how
        return
    if page is not None and page_known:
        result = align_words(text.text, text.words(*page), chunk.text, threshold, best=False,
                             spread=4)  # fmt: skip
        options = []
        if result.char_start is not None and result.char_end is not None:
            options.append((result.char_start, result.char_end, result.coverage, "words"))
        span = by_loader() if by_loader is not None else None
        if span is not None:
            options.append(span)
        if options:  # the narrower of the two
            start, end, coverage, how = min(options, key=lambda o: o[1] - o[0])
            found.chosen, found.coverage, found.how = (start, end), coverage, how
            return
    elif page is not None and not _words_on(text, page, chunk.text, threshold):
        result = align_words(text.text, text.words(0, size), chunk.text, threshold, best=False)
        if result.char_start is not None and result.char_end is not None:
            found.chosen, found.coverage = (result.char_start, result.char_end), result.coverage
            found.how = "words"
            return
    last = regions[-1]
    found.coverage = align_words(text.text, text.words(*last), chunk.text, threshold).coverage
    found.how = "page" if page is not None else "text"


def _words_on(text: DocumentText, region: tuple[int, int], passage: str, share: float) -> bool:
    """Whether ``share`` of the passage's words (as a multiset) are in the region."""
    wanted = Counter(w.norm for w in words_of(passage))
    have = Counter(w.norm for w in text.words(*region))
    return _overlap(wanted, have) >= share * max(1, sum(wanted.values()))


@dataclass(frozen=True, slots=True, kw_only=True)
class LoaderEvidence:
    """The per-page loader's text a set's offsets are into: ``pages`` of one extractor
    (confirmed on the set, ``core.imported.loader_check.choose_extractor``)."""

    pages: PageTexts
    _maps: dict[int, tuple[list[Word], dict[int, int]]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return extractor_label(self.pages.extractor)

    def _page_map(self, text: DocumentText, number: int) -> tuple[list[Word], dict[int, int]]:
        """The loader's words of a page (in its stripped text) and, for each, the index of
        the word of ours it lines up with (in order, as ``difflib`` matches them)."""
        if number not in self._maps:
            raw = (self.pages.page(number) or "").strip()
            theirs = words_of(raw)
            page = text.doc.pages[number - 1]
            ours = text.words(page.char_start, page.char_end)
            matcher = SequenceMatcher(
                None, [w.norm for w in theirs], [w.norm for w in ours], autojunk=False
            )
            pairs = {
                a + k: b + k for a, b, size in matcher.get_matching_blocks() for k in range(size)
            }
            self._maps[number] = (theirs, pairs)
        return self._maps[number]

    def place(
        self, text: DocumentText, find: LoaderFind, chunk: ForeignChunk, threshold: float
    ) -> tuple[int, int, float, str] | None:
        """The span of our page where the loader's text puts the chunk, for a chunk whose
        words are on its page (``threshold`` of them) in another order: the loader's page
        text, word-aligned with ours, lines up at least half its words, and the span is
        the tightest run of ours holding ``threshold`` of those; the share returned is
        that of the chunk's words inside it, with how it was placed (``"loader"``; a
        chunk whose words the loader split or joined is placed by its characters,
        ``"loader-chars"``). ``None`` when the words are not there."""
        if find.page is None or find.at is None:
            return None
        theirs, pairs = self._page_map(text, find.page)
        end = find.at + len(chunk.text.strip())
        own = [k for k, w in enumerate(theirs) if find.at <= w.char_start and w.char_end <= end]
        page = text.doc.pages[find.page - 1]
        ours = text.words(page.char_start, page.char_end)
        wanted = Counter(theirs[k].norm for k in own)
        total = sum(wanted.values())
        mapped = sorted(pairs[k] for k in own if k in pairs)
        if not total or not mapped:
            return None
        if _overlap(wanted, Counter(w.norm for w in ours)) < threshold * total:
            return self._place_chars(text, find, chunk, threshold, ours, mapped)
        if len(mapped) < total / 2:
            return None
        need = max(1, math.ceil(threshold * len(mapped) - 1e-9))
        first, last = min(
            ((mapped[i], mapped[i + need - 1]) for i in range(len(mapped) - need + 1)),
            key=lambda pair: ours[pair[1]].char_end - ours[pair[0]].char_start,
        )
        inside = _overlap(wanted, Counter(w.norm for w in ours[first : last + 1]))
        return ours[first].char_start, ours[last].char_end, inside / total, "loader"

    def _place_chars(
        self, text: DocumentText, find: LoaderFind, chunk: ForeignChunk, threshold: float,
        ours: list[Word], mapped: list[int],
    ) -> tuple[int, int, float, str] | None:  # fmt: skip
        """For a chunk whose words the loader split or joined where ours did not ("Registran
        t" for "Registrant", "accompanythe"): its characters, spacing aside, matched in order
        with ours around the words that did line up (runs of at least ``_CHAR_RUN``), and
        what is left looked for again in any order, in runs of at least ``_MOVED_RUN`` (a
        column the two extractions set elsewhere); the span runs from the first matched
        character of ours to the last, and the share returned is that of the chunk's
        characters matched."""
        number = find.page or 0
        raw = (self.pages.page(number) or "").strip()
        mine = "".join(raw[find.at or 0 : (find.at or 0) + len(chunk.text.strip())].split())
        mine = mine.casefold()
        own = text.doc.pages[number - 1]
        lo = max(own.char_start, ours[mapped[0]].char_start - _CHAR_MARGIN)
        hi = min(own.char_end, ours[mapped[-1]].char_end + _CHAR_MARGIN)
        view = _folded(whitespace_free_view(text.text, lo, hi))
        if not mine or not view.text:
            return None
        runs = _trimmed(_runs(mine, view.text))
        gaps, done = [], 0
        for a, _, size in runs:
            gaps.append((done, a))
            done = a + size
        gaps.append((done, len(mine)))
        for lo_gap, hi_gap in gaps:  # what is left, looked for in any order (a column moved)
            if hi_gap - lo_gap >= _MOVED_RUN:
                moved = _runs(mine[lo_gap:hi_gap], view.text)
                runs += [(lo_gap + a, b, n) for a, b, n in moved if n >= _MOVED_RUN]
        share = sum(size for _, _, size in runs) / len(mine)
        if not runs or share < threshold:
            return None
        start = view.offsets[min(b for _, b, _ in runs)]
        end = view.offsets[max(b + size for _, b, size in runs) - 1] + 1
        return start, end, share, "loader-chars"


def _folded(view: View) -> View:
    """``view`` case-folded, each folded character keeping its source offset ("ß" folds to
    "ss": two characters at one offset), so positions in it index its offsets."""
    pieces: list[str] = []
    offsets: list[int] = []
    for ch, at in zip(view.text, view.offsets, strict=True):
        folded = ch.casefold()
        pieces.append(folded)
        offsets.extend([at] * len(folded))
    return View(text="".join(pieces), offsets=offsets)


def _runs(mine: str, ours: str) -> list[tuple[int, int, int]]:
    """``(at in mine, at in ours, length)`` of the runs of at least ``_CHAR_RUN`` characters
    the two share, in order."""
    matcher = SequenceMatcher(None, mine, ours, autojunk=False)
    return [(a, b, size) for a, b, size in matcher.get_matching_blocks() if size >= _CHAR_RUN]


def _trimmed(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """In-order runs without a short one at either end that lies far from its neighbour in
    ours (farther than in the chunk): a word matched in another sentence."""

    def stray(run: tuple[int, int, int], other: tuple[int, int, int]) -> bool:
        first, second = sorted((run, other))
        far = second[1] - (first[1] + first[2])
        near = second[0] - (first[0] + first[2])
        return run[2] < _MOVED_RUN and far > 2 * near + _MOVED_RUN

    while len(runs) > 1 and stray(runs[0], runs[1]):
        runs = runs[1:]
    while len(runs) > 1 and stray(runs[-1], runs[-2]):
        runs = runs[:-1]
    return runs


def _overlap(wanted: Counter[str], have: Counter[str]) -> int:
    return sum(min(n, have[w]) for w, n in wanted.items())


def anchor_document(
    doc: Document,
    chunks: Sequence[ForeignChunk],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    text: DocumentText | None = None,
    loader: LoaderEvidence | None = None,
    pending: bool = False,
) -> list[Anchor]:
    """Anchor ``chunks`` (this document's, in import order) in ``doc``; see the module doc.
    ``text``: the document's prepared text, when the caller anchors in it more than once;
    ``loader``: the loader's own page text, where the chunks' offsets and pages are
    checked (a chunk is then placed on the page whose loader text holds it);
    ``pending``: without ``loader``, the loader's text is read later: every claimed offset
    and page is ``pending`` (the chunk is placed by our text alone)."""
    text = text if text is not None and text.doc is doc else DocumentText(doc)
    finds: list[LoaderFind | None] = [
        find_in_loader(loader.pages, c) if loader is not None else None for c in chunks
    ]
    placing = [
        replace(c, page=f.page) if f is not None and f.page is not None else c
        for c, f in zip(chunks, finds, strict=True)
    ]
    found = [_Found(places=text.places(c.text, c.page)) for c in placing]
    use_order = _ordered(found)
    fixed_after: list[int | None] = [None] * len(found)  # start of the next one-place chunk
    upcoming: int | None = None
    for k in range(len(found) - 1, -1, -1):
        fixed_after[k] = upcoming
        if len(found[k].places) == 1:
            upcoming = found[k].places[0][0]
    after = 0
    for k, (chunk, item) in enumerate(zip(placing, found, strict=True)):
        bound = (after, fixed_after[k]) if use_order else (0, None)
        find = finds[k]
        known = find is not None and find.page is not None
        rel = find.at / max(1, find.length) if find is not None and find.at is not None else None
        if len(item.places) == 1:
            item.chosen, item.coverage = item.places[0], 1.0
        elif item.places:
            _choose(text, chunk, item, *bound, rel=rel)
        else:
            by_loader = None
            if loader is not None and find is not None and known:
                by_loader = partial(loader.place, text, find, chunk, threshold)
            _align(text, chunk, item, *bound, threshold, page_known=known, by_loader=by_loader)
        if item.chosen is not None:
            after = item.chosen[0]
    label = loader.label if loader is not None else None
    waits = pending and loader is None
    return [
        _verdict(text, chunk, placed, item, threshold, find, label, pending=waits)
        for chunk, placed, item, find in zip(chunks, placing, found, finds, strict=True)
    ]


def _place_name(places: list[tuple[int, int]], span: tuple[int, int]) -> str:
    if len(places) < 2 or span not in places:
        return ""
    return f", its {ordinal(places.index(span) + 1)} occurrence"


def _verdict(
    text: DocumentText, chunk: ForeignChunk, placed: ForeignChunk, item: _Found,
    threshold: float, find: LoaderFind | None, label: str | None, *, pending: bool = False,
) -> Anchor:  # fmt: skip
    doc = text.doc
    kind: AnchorKind
    details: list[str] = []
    start: int | None = None
    end: int | None = None
    if item.chosen is not None:
        start, end = item.chosen
        exact = item.how == "" and doc.text[start:end] == chunk.text.strip()
        kind = "exact" if exact else "aligned"
        if kind == "aligned":
            details.append(
                f"aligned on {item.coverage:.0%} of its words"
                if item.how == "words"
                else f"placed by the loader's text: {item.coverage:.0%} of its words line up"
                if item.how == "loader"
                else f"placed by the loader's text: {item.coverage:.0%} of its characters line"
                " up (the loader split or joined its words)"
                if item.how == "loader-chars"
                else "the same characters with other spacing or line breaks"
            )
            ratio = span_ratio(doc.text[start:end], chunk.text)
            if ratio > WIDE_SPAN:
                details.append(
                    f"its span is {ratio:.1f}x the chunk's length (its words in another order)"
                )
    elif item.places:
        kind = "ambiguous"
        many = f"{len(item.places)}" if len(item.places) <= _MAX_PLACES else f"over {_MAX_PLACES}"
        details.append(f"its text occurs {many} times and nothing decides which")
    else:
        kind = "missing"
        best = item.coverage or 0.0
        where = f" on its page {placed.page} or the next" if item.how == "page" else ""
        details.append(
            f"not found{where}: at best {best:.0%} of its words together, under {threshold:.0%}"
        )
    claim: ClaimKind
    page_claim: PageClaimKind
    pages = doc.pages_of(start, end) if start is not None and end is not None else ()
    if pending:  # the loader's text decides both, once it is read
        claim = "absent" if chunk.claimed_start is None else "pending"
        page_claim = "absent" if chunk.page is None else "pending"
        if "pending" in (claim, page_claim):
            details.append(PENDING_DETAIL)
    else:
        if label is not None:
            claim, said = _loader_claim(chunk, find, label)
        else:
            claim, said = _claim(doc, chunk, item)
        if said:
            details.append(said)
        page_claim, page_said = _page_claim(text, chunk, item, tuple(pages), find)
        if page_said:
            details.append(page_said)
    return Anchor(
        index=chunk.index,
        doc_id=doc.doc_id,
        doc_sha256=doc.sha256,
        anchor=kind,
        char_start=start,
        char_end=end,
        coverage=None if kind == "ambiguous" else round(item.coverage or 0.0, 4),
        pages=tuple(pages),
        claim=claim,
        claimed_start=chunk.claimed_start,
        places=len(item.places),
        detail="; ".join(details),
        page_claim=page_claim,
        claimed_page=chunk.page,
    )


def _pages_text(pages: Sequence[int]) -> str:
    return ("p. " if len(pages) == 1 else "pp. ") + ", ".join(map(str, pages))


def _page_claim(
    text: DocumentText, chunk: ForeignChunk, item: _Found, pages: tuple[int, ...],
    find: LoaderFind | None,
) -> tuple[PageClaimKind, str]:  # fmt: skip
    """The verdict on the page the chunk claims: by the loader's text where it holds the
    chunk's text, else by where the chunk is anchored in ours."""
    claimed = chunk.page
    doc = text.doc
    if claimed is None:
        return "absent", ""
    if not doc.is_paged:
        return "unchecked", f"claims p. {claimed}, and the document has no pages"
    if not 1 <= claimed <= len(doc.pages):
        return "wrong", f"claims p. {claimed}, the document has {len(doc.pages):,} pages"
    if find is not None and find.page is not None:
        if find.on_claimed:
            return "ok", ""
        return "wrong", f"claims p. {claimed}, is on p. {find.page}"
    if pages:
        if claimed in pages:
            return "ok", ""
        return "wrong", f"claims p. {claimed}, is on {_pages_text(pages)}"
    if item.places:
        on = sorted({n for a, b in item.places for n in doc.pages_of(a, b)})
        if claimed in on:
            return "ok", ""
        return "wrong", f"claims p. {claimed}, its text is on {_pages_text(on)}"
    return "unchecked", ""


def _loader_claim(
    chunk: ForeignChunk, find: LoaderFind | None, label: str
) -> tuple[ClaimKind, str]:
    """The verdict on the offset, in the loader's text of the claimed page."""
    claimed = chunk.claimed_start
    if claimed is None:
        return "absent", ""
    if claimed < 0:
        return "wrong", f"claims {claimed} (no offset)"
    if find is None:
        if chunk.page is None:
            return "unchecked", "its offset is into one page's text, and it names no page"
        return "unchecked", f"claims {claimed:,} on p. {chunk.page}, which {label} cannot read"
    if find.holds:
        return "ok", ""
    if find.page is None:
        return "wrong", (
            f"claims {claimed:,} on p. {chunk.page}, and {label}'s text of the document "
            "does not hold its text"
        )
    if find.on_claimed:
        return "wrong", (
            f"claims {claimed:,}, its text is at {find.at:,} in {label}'s text of p. {find.page}"
        )
    return "wrong", (
        f"claims {claimed:,} on p. {chunk.page}, its text is at {find.at:,} in {label}'s "
        f"text of p. {find.page}"
    )


def _starts_at(doc: Document, chunk: ForeignChunk, claimed: int, start: int) -> bool:
    """The claimed offset is where the anchored span starts (its leading blanks aside)."""
    lead = len(chunk.text) - len(chunk.text.lstrip())
    return start in (claimed, claimed + lead) or (
        claimed <= start and not doc.text[claimed:start].strip()
    )


def _claim(doc: Document, chunk: ForeignChunk, item: _Found) -> tuple[ClaimKind, str]:
    claimed = chunk.claimed_start
    if claimed is None:
        return "absent", ""
    where = ""
    if item.chosen is not None:
        where = f"text is at {item.chosen[0]:,}{_place_name(item.places, item.chosen)}"
    if claimed < 0:
        return "wrong", f"claims {claimed} (no offset); " + (where or "text not found")
    points = _claimed_place(doc, chunk, claimed)
    if points is not None and item.chosen is not None and points == item.chosen:
        return "ok", ""
    if points is not None:  # it holds the text, at a place the rest of the import rules out
        at = f"claims {claimed:,}{_place_name(item.places, points)}"
        if item.chosen is None or item.chosen[0] == points[0]:
            return "ok", ""  # an offset claims a start, and the span starts there
        return "wrong", f"{at}, {where}"
    if not _claim_checkable(doc):
        return "unchecked", "its offset is into another extraction of the document"
    if item.chosen is not None and _starts_at(doc, chunk, claimed, item.chosen[0]):
        return "ok", ""  # the same words respaced, starting where it claims
    if claimed >= len(doc.text):
        return "wrong", f"claims {claimed:,}, past the end of the text ({len(doc.text):,} chars)"
    return "wrong", f"claims {claimed:,}, " + (where or "and the text is not in the document")
