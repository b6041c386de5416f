"""Titles of chunks for result cards, pickers and charts.

A title is the nearest real heading at or above the chunk, the first words of the chunk's
own text, and which of that heading's chunks it is, so chunks that share a heading read
apart: ``Liquidity — “Cash and cash equivalents were …” (2 of 5)``.

*Real heading*: a heading block (or a title line the parser left a paragraph: the first
block of a page when it reads as a title, ``title_lines``) that is not a
table's column heading or unit line. Filings
repeat those above every statement, and a parser that types them as headings would title
every table chunk "Six Months Ended December 31, ($ in millions...)". A heading is not
real when its text (whitespace folded, case ignored) is the text of a header row of any
table of the document (``Block.header_rows``), when it is wholly in parentheses ("(in
millions, unaudited)"), or when it is a reporting-period column heading ("Three Months
Ended", "Six Months Ended December 31,", "First-Quarter"), or when it sets labels apart in
columns (a tab, or three spaces between words: a heading row).

*Own text*: the chunk's text without the heading blocks and table header rows inside its
span (a chunk that opens a table starts with the header rows every piece of the table
shares). A chunk that is nothing but those falls back to its whole text.

*Which of*: chunks are counted per heading text in document order (the two certifications
headed "Section 302 of the Sarbanes-Oxley Act" count on from one to the other, so no two
titles of a document read alike unless their words do too), among the chunks handed in:
hand in every chunk of the document under one policy to number them as the document does.

Offsets are the canonical text's character offsets (half-open); nothing here is searched.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from core.provenance.types import Block

TITLE_SEPARATOR = " — "
PATH_SEPARATOR = " › "
LABEL_WORDS = 6  # words of own text in a one-line label (a card shows ``n_words``)
_PERIOD_HEADING = re.compile(
    r"(?:three|six|nine|twelve|\d+)[\s-]+(?:months?|weeks?|quarters?)\s+end(?:ed|ing)\b.*"
    r"|(?:fiscal\s+)?(?:years?|quarters?|periods?)\s+end(?:ed|ing)\b.*"
    r"|(?:first|second|third|fourth)[\s-]+quarter",
    re.IGNORECASE | re.DOTALL,
)


class SpannedChunk(Protocol):
    """What a title needs of a chunk: a ``Chunk`` or a stored hit both have it (read-only,
    so frozen records match)."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def char_start(self) -> int: ...

    @property
    def char_end(self) -> int: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkTitle:
    """A chunk's title parts: ``heading`` ('' when no real heading precedes it) and its
    ``path`` of real headings, ``words`` (the first words of its own text, ``more`` when
    it goes on), and its ``ordinal`` (1-based) among the ``count`` chunks titled by the
    same heading."""

    heading: str
    words: str
    more: bool = False
    ordinal: int = 1
    count: int = 1
    path: tuple[str, ...] = ()  # the real headings down to ``heading``, outermost first

    @property
    def place(self) -> str:
        """``"2 of 5"``, or '' when the heading titles this chunk alone."""
        return f"{self.ordinal} of {self.count}" if self.count > 1 else ""

    @property
    def head(self) -> str:
        """The heading line of a card: ``Item 2 › Liquidity · 2 of 5``."""
        trail = PATH_SEPARATOR.join(self.path or (self.heading,))
        return " · ".join(p for p in (trail, self.place) if p)

    @property
    def text(self) -> str:
        """Every kept word of the own text, ``…`` when it goes on."""
        return self.words + (" …" if self.more else "")

    @property
    def label(self) -> str:
        """The one-line title: ``Heading — “first words …” (2 of 5)``, with at most
        ``LABEL_WORDS`` words."""
        kept = self.words.split()
        cut = self.more or len(kept) > LABEL_WORDS
        shown = " ".join(kept[:LABEL_WORDS]) + (" …" if cut else "")
        quoted = f"“{shown}”" if shown else ""
        head = TITLE_SEPARATOR.join(p for p in (self.heading, quoted) if p)
        return f"{head} ({self.place})" if self.place else head


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _real_path(path: Sequence[str], header_texts: Iterable[str] = ()) -> tuple[str, ...]:
    """The real headings of a heading path, each on one line."""
    return tuple(" ".join(h.split()) for h in path if is_real_heading(h, header_texts))


def is_real_heading(text: str, header_texts: Iterable[str] = ()) -> bool:
    """Whether a heading's ``text`` titles a section (see the module docstring);
    ``header_texts`` are the texts of the document's table header rows."""
    folded = _folded(text)
    if not folded:
        return False
    if folded in {_folded(t) for t in header_texts}:
        return False
    if folded.startswith("(") and folded.endswith(")"):
        return False
    if _COLUMNS.search(text):  # labels set apart in columns: a table's heading row
        return False
    return _PERIOD_HEADING.fullmatch(folded) is None


_COLUMNS = re.compile(r"\t|\S {3,}\S")
_OWNER_LINE = re.compile(
    r"\b(?:inc|corp|corporation|company|companies|ltd|plc|llc|subsidiaries)\b\.?\s*$", re.I
)
_SMALL_WORDS = frozenset(
    ("a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "vs", "with")
)
_COLUMN_WORDS = re.compile(
    r"^(?:\(?(?:dollars|amounts)\b.*\b(?:millions|thousands|billions)\)?"
    r"|(?:three|six|nine|twelve)[\s-]+months\b.*|.*\bto date\b.*)$",
    re.IGNORECASE,
)
TITLE_MAX_CHARS = 140
_EXHIBIT = re.compile(r"exhibit\s+\d+(?:\.\d+)?", re.IGNORECASE)


def _title_like(text: str, *, lone: bool = False) -> bool:
    """A statement's or section's title line: a few capitalised words, no sentence; one
    word of four letters or more when it is in capitals ("SIGNATURES"), or, with
    ``lone``, capitalised ("Overview")."""
    flat = " ".join(text.split())
    if _EXHIBIT.fullmatch(text.split("\n")[0].strip()):
        return True  # "EXHIBIT 31.1": an exhibit's title line
    if not 3 <= len(flat) <= TITLE_MAX_CHARS or flat[-1] in ".;,":
        return False
    if flat[-1] == ":" and not flat.isupper():
        return False  # a sentence's lead-in; "ABOUT ACME:" stands as a title
    if _COLUMNS.search(text) or not is_real_heading(flat) or _COLUMN_WORDS.match(flat):
        return False
    if not flat[0].isalpha():  # "(MILLIONS) ...", "2022 ...": a table's heading row
        return False
    bare = re.sub(r"\([^)]*\)", " ", flat)  # "(Unaudited)", "($MM)": kept, not counted
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", bare) if w.lower() not in _SMALL_WORDS]
    if len(re.findall(r"\d+", flat)) > 1:  # figures: a row, not a title
        return False
    if len(words) < 2:
        one = words[0] if len(words) == 1 and len(bare.split()) == 1 else ""
        return len(one) >= 4 and (one.isupper() or (lone and one[0].isupper()))
    capital = sum(w[0].isupper() for w in words)
    return capital >= 0.8 * len(words)


def title_lines(blocks: Sequence[Block]) -> list[Block]:
    """Title lines the parser typed as paragraphs, as heading blocks (level 1): the first
    block of a page when it reads as a title (a statement's title above its table; not a
    unit line, a period or a heading row), spanning the whole block; its heading path
    holds the title, without a first line naming the company ("ACME INC. AND
    SUBSIDIARIES") when a second line follows.

    A block typed as a running header whose text stands in no other header or footer of
    the document is a section's heading set at the top of its page ("Note 3 - Restructuring
    ...", "Item 6. Exhibits", "Overview"), not furniture: a running header repeats."""
    ordered = sorted(blocks, key=lambda b: b.char_start)
    body = [b for b in ordered if b.kind not in ("header", "footer")]
    furniture = [b for b in ordered if b.kind in ("header", "footer")]
    repeats: dict[str, int] = {}
    for b in furniture:
        repeats[_folded(b.text)] = repeats.get(_folded(b.text), 0) + 1
    once = [b for b in furniture if b.kind == "header" and repeats[_folded(b.text)] == 1]
    out: list[Block] = []
    seen_pages: set[int] = set()
    firsts = []
    for block in body:
        if block.page not in seen_pages and block.kind in ("paragraph", "caption"):
            firsts.append(block)
        seen_pages.add(block.page)
    for block in sorted([*firsts, *once], key=lambda b: b.char_start):
        title = block.text
        lines = title.split("\n")
        if len(lines) > 1 and _OWNER_LINE.search(lines[0].strip()):
            title = title[len(lines[0]) + 1 :]
        if _EXHIBIT.fullmatch(lines[0].strip()):
            title = "\n".join(lines[:2])  # the exhibit's number and its title line
        elif block.kind == "caption":
            continue  # a figure's or table's caption is no section title
        if not _title_like(title, lone=block.kind == "header") or len(title.split("\n")) > 2:
            continue
        out.append(  # the whole block's span (a chunk opening at the company line is
            Block(  # the statement's), titled by its heading path
                doc_id=block.doc_id, doc_sha256=block.doc_sha256, kind="heading",
                char_start=block.char_start, char_end=block.char_end, text=block.text,
                page=block.page, bbox_pt=None, level=1, heading_path=(" ".join(title.split()),),
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True, slots=True)
class HeadingIndex:
    """The real headings of one document by offset, and the spans left out of own text.

    ``starts``/``titles``/``paths``: each real heading block's ``char_start``, its text on
    one line and the real headings of its heading path (ending with it), sorted by offset;
    ``skipped``: the spans of every heading block and every table header row, sorted and
    disjoint."""

    starts: tuple[int, ...]
    titles: tuple[str, ...]
    skipped: tuple[tuple[int, int], ...]
    paths: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of(cls, doc_text: str, blocks: Sequence[Block]) -> HeadingIndex:
        """The index of a document's parsed ``blocks`` (any order) over ``doc_text``;
        title lines the parser left untyped (``title_lines``) count as headings."""
        rows = [(a, b) for blk in blocks if blk.kind == "table" for a, b in blk.header_rows]
        header_texts = {_folded(doc_text[a:b]) for a, b in rows}
        typed = [b for b in blocks if b.kind == "heading"]
        promoted = title_lines(blocks)
        named = {id(h): h.heading_path[-1] for h in promoted}  # a title line's own words
        headings = sorted([*typed, *promoted], key=lambda b: b.char_start)
        real = [h for h in headings if is_real_heading(named.get(id(h), h.text), header_texts)]
        spans = sorted([*rows, *((h.char_start, h.char_end) for h in headings)])
        merged: list[tuple[int, int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        titles = tuple(named.get(id(h)) or " ".join(h.text.split()) for h in real)
        paths = tuple(
            _real_path((*h.heading_path[:-1], title), header_texts)
            for h, title in zip(real, titles, strict=True)
        )
        return cls(tuple(h.char_start for h in real), titles, tuple(merged), paths)

    def heading_of(self, chunk: SpannedChunk) -> int | None:
        """Position in ``starts`` of the heading in effect where the chunk's own text
        begins (the last real heading starting at or before it: a chunk that opens with
        "PART I" and "ITEM 1" is ITEM 1's), else of the first real heading inside the
        chunk; None without one."""
        at = bisect.bisect_right(self.starts, self.own_start(chunk)) - 1
        if at >= 0:
            return at
        return 0 if self.starts and self.starts[0] < chunk.char_end else None

    def own_start(self, chunk: SpannedChunk) -> int:
        """The offset of the chunk's first character outside the skipped spans and the
        whitespace between them (``char_start`` when it opens with its own text)."""
        a0, b0 = chunk.char_start, chunk.char_end
        cursor = a0
        first = max(0, bisect.bisect_right(self.skipped, (a0, a0)) - 1)
        for a, b in self.skipped[first:]:
            while cursor < min(a, b0) and chunk.text[cursor - a0].isspace():
                cursor += 1
            if a > cursor or cursor >= b0:
                break
            cursor = max(cursor, min(b, b0))
        return cursor if cursor < b0 else a0

    def own_text(self, chunk: SpannedChunk) -> str:
        """The chunk's text without the skipped spans inside it (whole text if nothing
        else is left)."""
        a0, b0 = chunk.char_start, chunk.char_end
        kept, cursor = [], a0
        first = max(0, bisect.bisect_right(self.skipped, (a0, a0)) - 1)
        for a, b in self.skipped[first:]:
            if a >= b0:
                break
            if b <= cursor:
                continue
            kept.append(chunk.text[cursor - a0 : max(cursor, a) - a0])
            cursor = max(cursor, min(b, b0))
        kept.append(chunk.text[cursor - a0 :])
        own = " ".join(" ".join(kept).split())
        return own or " ".join(chunk.text.split())


def chunk_titles(
    chunks: Sequence[SpannedChunk], index: HeadingIndex, *, n_words: int = 18
) -> dict[str, ChunkTitle]:
    """Titles of one document's ``chunks`` by ``chunk_id`` (see the module docstring),
    each keeping ``n_words`` words of its own text."""
    ordered = sorted(chunks, key=lambda c: (c.char_start, c.char_end))
    groups: dict[str, list[SpannedChunk]] = {}
    paths: dict[str, tuple[str, ...]] = {}
    for chunk in ordered:
        at = index.heading_of(chunk)
        heading = index.titles[at] if at is not None else ""
        groups.setdefault(heading, []).append(chunk)
        paths[chunk.chunk_id] = index.paths[at] if at is not None and index.paths else ()
    out: dict[str, ChunkTitle] = {}
    for heading, members in groups.items():
        for n, chunk in enumerate(members, start=1):
            words = index.own_text(chunk).split()
            out[chunk.chunk_id] = ChunkTitle(
                heading=heading, words=" ".join(words[:n_words]), more=len(words) > n_words,
                ordinal=n, count=len(members), path=paths[chunk.chunk_id],
            )  # fmt: skip
    return out


def stored_title(heading_path: Sequence[str], text: str, *, n_words: int = 18) -> ChunkTitle:
    """The title of a chunk whose document is not at hand (no blocks): the last real
    heading of its stored ``heading_path`` and its first words, without a place."""
    path = _real_path(heading_path)
    words = text.split()
    return ChunkTitle(
        heading=path[-1] if path else "", words=" ".join(words[:n_words]),
        more=len(words) > n_words, path=path,
    )  # fmt: skip
