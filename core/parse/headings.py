"""Which runs of PDF lines are headings, and their levels.

A run of lines looks like a heading when it is short (at most ``MAX_LINES`` lines and
``MAX_CHARS`` characters, with letters, not ending like a sentence) and either set in a
font clearly larger than the body text (``SIZE_RATIO``), or bold at body size or larger,
or it matches an outline entry of its page.

Levels, in order of trust:

1. the PDF outline: a run whose text matches an outline title on its page (or the next)
   gets that entry's level;
2. numbering: "2.1 Foo" is level 2, "3 Bar" level 1, "A.2 Baz" level 2;
3. the style (size rounded to half a point, bold): the level most often given to that
   style by rules 1 and 2 elsewhere in the document;
4. font-size rank among the remaining heading styles, larger first, after the levels
   already in use above them.

A PDF with a rich outline (at least ``RICH_OUTLINE`` entries) is trusted to list its
headings: other candidates keep a heading type only in a style the outline's headings
use, or as the document title.

A page that is mostly heading candidates (a cover page of bold lines: registrant, form,
period, addresses; the labels of a diagram) keeps only its largest ones
(``cover_page_keep``): at least ``COVER_MIN_HEADINGS`` candidates making at least
``COVER_SHARE`` of the page's runs of lines outside furniture, fewer than ``COVER_SHARE``
of them followed by body text (a datasheet's sections each have theirs).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from core.provenance.types import OutlineEntry, TextLine

MAX_LINES = 3
MAX_CHARS = 160
SIZE_RATIO = 1.12
RICH_OUTLINE = 3
MAX_DEST_DISTANCE_PT = 48.0
COVER_MIN_HEADINGS = 4
COVER_SHARE = 0.5
_NUMBERED = re.compile(
    r"^(?:(?:chapter|kapitel|section|abschnitt|part|teil|appendix|anhang)\s+)?"
    r"(\d{1,3}(?:\.\d{1,3})*)\.?(?:\s+|$)",
    re.I,
)
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,3})+)\.?\s")
_NOT_ALNUM = re.compile(r"[\W_]+")
_LETTERS = re.compile(r"[^\W\d_]")
_LEADERS = re.compile(r"(\.\s?){4,}|…{2,}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadingCandidate:
    """A run of lines that looks like a heading; ``size_pt`` is its largest font size."""

    text: str
    page: int
    size_pt: float
    bold: bool
    outline_level: int = 0


def key(text: str) -> str:
    """Comparison key for titles: lowercase letters and digits only."""
    return _NOT_ALNUM.sub("", text.lower())


def body_size(lines: Sequence[TextLine]) -> float:
    """The font size (half-point steps) carrying the most characters."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size_pt * 2) / 2] += line.char_end - line.char_start
    return weights.most_common(1)[0][0] if weights else 0.0


def numbering_depth(text: str) -> int:
    match = _NUMBERED.match(text) or _LETTERED.match(text)
    if not match:
        return 0
    return match.group(1).count(".") + 1


def looks_like_heading(text: str, lines: Sequence[TextLine], body_pt: float) -> bool:
    """Style and shape test (see the module docstring); ``text`` is the run's text."""
    if not 0 < len(lines) <= MAX_LINES or len(text) > 2 * MAX_CHARS:
        return False
    size = max(line.size_pt for line in lines)
    styled = size >= SIZE_RATIO * body_pt or (
        size >= 0.95 * body_pt and all(line.bold for line in lines)
    )
    if not styled or any(line.monospace for line in lines):
        return False
    flat = " ".join(text.split())
    if len(flat) > MAX_CHARS or flat[-1] in ".,;:" or flat[0] in "•–-*" or is_toc_entry(flat):
        return False
    return len(_LETTERS.findall(flat, 0, 40)) >= 2


def is_toc_entry(text: str) -> bool:
    """A line of a table of contents: a title, leader dots, a page number."""
    if text.count(".") < 4 and "…" not in text:
        return False  # the cheap test first: this runs on every heading candidate
    return _LEADERS.search(text) is not None


class OutlineIndex:
    """Outline titles by page, for matching runs of text against them.

    A run matches an entry when their keys are equal or one starts with the other (the
    run's leading section number may be missing from the title), on the entry's page and,
    when the entry has a position, no more than ``MAX_DEST_DISTANCE_PT`` from it.
    """

    def __init__(self, outline: Sequence[OutlineEntry]) -> None:
        self._by_page: dict[int, list[tuple[str, int, float | None]]] = defaultdict(list)
        for entry in outline:
            title = key(entry.title)
            if title:
                self._by_page[entry.page].append((title, entry.level, entry.y_pt))

    def __bool__(self) -> bool:
        return bool(self._by_page)

    def level_of(self, text: str, page: int, top_pt: float | None = None) -> int:
        """The outline level of the entry this text is the title of, else 0."""
        near = [
            (title, level)
            for entry_page in (page, page + 1, page - 1)
            for title, level, y in self._by_page.get(entry_page, ())
            if not _too_far(entry_page, y, page, top_pt)
        ]
        if not near:
            return 0  # no entry to match here (the text's keys are not needed)
        full = key(text)
        bare = key(_NUMBERED.sub("", text, count=1))
        if len(full) < 2:
            return 0
        for title, level in near:
            if _same_title(full, title) or (bare and _same_title(bare, title)):
                return level
        return 0


def _too_far(entry_page: int, y: float | None, page: int, top_pt: float | None) -> bool:
    """An entry with a position matches only text on its page within
    ``MAX_DEST_DISTANCE_PT`` of it (a NaN position, unknown, is not too far)."""
    if y is None or top_pt is None:
        return False
    return entry_page != page or abs(top_pt - y) > MAX_DEST_DISTANCE_PT


def _same_title(run: str, title: str) -> bool:
    if run == title:
        return True
    if len(title) >= 4 and run.startswith(title):
        return True
    return len(run) >= 6 and title.startswith(run) and len(run) >= 0.6 * len(title)


def assign_levels(
    candidates: Sequence[HeadingCandidate], *, outline_rich: bool = False, title: str = ""
) -> list[int]:
    """A level for every candidate by the rules of the module docstring; 0 drops it.

    With a rich outline (``outline_rich``), the outline is trusted to list the headings:
    a candidate it does not list stays a heading only when its style is one the outline's
    headings use, or when it is the document ``title`` (level 1).
    """
    levels = [c.outline_level or numbering_depth(c.text) for c in candidates]
    by_style: dict[tuple[float, bool], Counter[int]] = defaultdict(Counter)
    for candidate, level in zip(candidates, levels, strict=True):
        if level and (candidate.outline_level or not outline_rich):
            by_style[_style(candidate)][level] += 1
    unknown = sorted(
        {_style(c) for c, level in zip(candidates, levels, strict=True) if not level}
        - set(by_style),
        key=lambda style: (-style[0], not style[1]),
    )
    ranked = _rank_unknown_styles(unknown, by_style)
    title_key = key(title)
    out: list[int] = []
    for candidate, level in zip(candidates, levels, strict=True):
        style = _style(candidate)
        if outline_rich and not candidate.outline_level:
            if title_key and _same_title(key(candidate.text), title_key):
                level = 1
            elif style in by_style:
                level = level or by_style[style].most_common(1)[0][0]
            else:
                level = 0
        elif not level:
            level = by_style[style].most_common(1)[0][0] if style in by_style else ranked[style]
        out.append(min(level, 6))
    return out


def _style(candidate: HeadingCandidate) -> tuple[float, bool]:
    return (round(candidate.size_pt * 2) / 2, candidate.bold)


def _rank_unknown_styles(
    unknown: list[tuple[float, bool]], known: dict[tuple[float, bool], Counter[int]]
) -> dict[tuple[float, bool], int]:
    """Unknown styles, largest first, take the level after the deepest known style that
    is at least as large (1 when none is)."""
    ranked: dict[tuple[float, bool], int] = {}
    for style in unknown:
        above = [
            counts.most_common(1)[0][0]
            for other, counts in known.items()
            if (other[0], other[1]) > (style[0], style[1])
        ]
        above += [level for other, level in ranked.items() if other > style]
        ranked[style] = max(above, default=0) + 1
    return ranked


def cover_page_keep(
    candidates: Sequence[HeadingCandidate],
    page_runs: dict[int, int],
    followed: Sequence[bool],
) -> list[bool]:
    """Which candidates stay headings under the cover-page rule (module docstring).

    ``page_runs`` counts each page's runs of lines outside furniture; ``followed[k]``
    says whether body text (not another heading) comes right after candidate ``k``. On a
    page the rule applies to, a candidate stays when it is in the outline, numbered, or
    set in the largest size of the page's candidates while they come in more than one
    size.
    """
    by_page: dict[int, list[int]] = defaultdict(list)
    for k, candidate in enumerate(candidates):
        by_page[candidate.page].append(k)
    keep = [True] * len(candidates)
    for page, members in by_page.items():
        if len(members) < COVER_MIN_HEADINGS or len(members) < COVER_SHARE * page_runs.get(page, 0):
            continue
        if sum(followed[k] for k in members) >= COVER_SHARE * len(members):
            continue  # sections with their text: a datasheet, not a cover
        sizes = {round(candidates[k].size_pt * 2) for k in members}
        for k in members:
            candidate = candidates[k]
            listed = candidate.outline_level or numbering_depth(candidate.text)
            largest = len(sizes) > 1 and round(candidate.size_pt * 2) == max(sizes)
            keep[k] = bool(listed) or largest
    return keep
