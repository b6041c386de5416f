"""Word alignment: the tightest run of a region's words that holds a passage's words.

The passage's words are matched as a multiset against the region's words (so reordered
table cells still match). The tightest run of region words holding at least ``threshold``
of the passage's words is taken, then widened over nearby region words that are
still-missing passage words (so a full match is never trimmed to 95%). Below the
threshold, or when the words reach it only spread over more than about twice the
passage's length, there is no alignment, only the best coverage seen: never a guess.

Words and their comparison form are those of ``core.align.words``; every offset is an
offset into the text the region's words were read from.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from core.align.words import Word, words_of
from core.native import words as native

_GAP_WORDS = 3  # how far past the tight window a missing passage word may still be taken
_EDGE_MARKS = ".,;:!?)]}\"'\u2019\u201d([{\u2018\u201c"


@dataclass(frozen=True, slots=True, kw_only=True)
class WordAlignment:
    """``[char_start, char_end)`` of the aligned run (``None`` when there is none) and the
    share of the passage's words inside it (or, without a run, the best share any run of
    region words reached)."""

    char_start: int | None
    char_end: int | None
    coverage: float

    @property
    def found(self) -> bool:
        return self.char_start is not None


def align_words(
    text: str, region: list[Word], passage: str, threshold: float, *, best: bool = True,
    spread: int = 2,
) -> WordAlignment:  # fmt: skip
    """Align ``passage`` on ``region`` (words of ``text``, in order); see the module doc.
    Without ``best``, a failed alignment reports coverage 0 instead of measuring it.
    ``spread``: how many times the passage's word count the run may take (2 by default;
    more only where other evidence has already placed the passage in the region)."""
    wanted_words = Counter(w.norm for w in words_of(passage))
    if not wanted_words:
        return WordAlignment(char_start=None, char_end=None, coverage=0.0)
    vocab = {word: index for index, word in enumerate(wanted_words)}
    wanted = Counter({vocab[w]: n for w, n in wanted_words.items()})
    total = sum(wanted.values())
    need = max(1, math.ceil(threshold * total - 1e-9))
    if native.available():  # the same steps on integer arrays (core.native.words)
        ids = native.word_ids(region, vocab)
        counts = [wanted[i] for i in range(len(vocab))]
        window = native.tight_window(ids, counts, need)
    else:
        ids = [vocab.get(w.norm, -1) for w in region]
        window = _tight_window(ids, wanted, need)
    if window is None or window[1] - window[0] + 1 > _longest_run(total, spread):
        coverage = _best_coverage(ids, wanted) if best else 0.0
        return WordAlignment(char_start=None, char_end=None, coverage=coverage)
    left, right, matched = _widen(ids, wanted, window)
    first, last = _with_edge_punctuation(
        text, passage, region[left].char_start, region[right].char_end
    )
    return WordAlignment(char_start=first, char_end=last, coverage=matched / total)


def _tight_window(ids: list[int], wanted: Counter[int], need: int) -> tuple[int, int] | None:
    """Shortest ``[i, j]`` (inclusive, in words) whose multiset overlap with ``wanted``
    reaches ``need``; ties go to the earliest."""
    have: Counter[int] = Counter()
    matched = 0
    left = 0
    best: tuple[int, int] | None = None
    for right, word in enumerate(ids):
        if word >= 0:
            if have[word] < wanted[word]:
                matched += 1
            have[word] += 1
        while matched >= need:
            if best is None or right - left < best[1] - best[0]:
                best = (left, right)
            gone = ids[left]
            if gone >= 0:
                have[gone] -= 1
                if have[gone] < wanted[gone]:
                    matched -= 1
            left += 1
    return best


def _widen(ids: list[int], wanted: Counter[int], window: tuple[int, int]) -> tuple[int, int, int]:
    """Grow the window over nearby words still missing; returns (i, j, matched)."""
    left, right = window
    inside = Counter(w for w in ids[left : right + 1] if w >= 0)
    missing = Counter({w: wanted[w] - inside[w] for w in wanted if wanted[w] > inside[w]})
    grew = True
    while grew and +missing:
        grew = False
        for step in (-1, 1):
            edge = left if step < 0 else right
            probes = range(edge + step, edge + step * (_GAP_WORDS + 1), step)
            hit = next((p for p in probes if 0 <= p < len(ids) and missing[ids[p]] > 0), None)
            if hit is None:
                continue
            added = range(hit, edge) if step < 0 else range(edge + 1, hit + 1)
            for position in added:
                if missing[ids[position]] > 0:
                    missing[ids[position]] -= 1
            left, right = min(left, hit), max(right, hit)
            grew = True
    return left, right, sum(wanted.values()) - sum((+missing).values())


def _longest_run(total: int, spread: int = 2) -> int:
    """Most page words an aligned span of ``total`` evidence words may take: room for
    interleaved cells and split words, never a whole page of scattered common words."""
    return max(spread * total, total + 10)


def _best_coverage(ids: list[int], wanted: Counter[int]) -> float:
    """Best multiset coverage of any run of at most ``_longest_run`` words."""
    total = sum(wanted.values())
    size = _longest_run(total)
    if native.available():
        counts = [wanted[i] for i in range(max(wanted, default=-1) + 1)]
        best = native.best_matched(ids, counts, size)
    else:
        best = best_matched(ids, wanted, size)
    return best / total if total else 0.0


def best_matched(ids: list[int], wanted: Counter[int], size: int) -> int:
    """The most wanted words (as a multiset) any run of at most ``size`` ids holds."""
    best = 0
    have: Counter[int] = Counter()
    matched = 0
    for right, word in enumerate(ids):
        if word >= 0:
            matched += have[word] < wanted[word]
            have[word] += 1
        if right >= size:
            gone = ids[right - size]
            if gone >= 0:
                have[gone] -= 1
                matched -= have[gone] < wanted[gone]
        best = max(best, matched)
    return best


def _with_edge_punctuation(text: str, evidence: str, start: int, end: int) -> tuple[int, int]:
    """Take in punctuation that opens or closes the evidence when the text has it there
    too (a closing full stop, an opening quote), so an aligned sentence keeps its ends."""
    stripped = evidence.strip()
    head = stripped[: len(stripped) - len(stripped.lstrip(_EDGE_MARKS))]
    tail = stripped[len(stripped.rstrip(_EDGE_MARKS)) :]
    if head and text[max(0, start - len(head)) : start] == head:
        start -= len(head)
    if tail and text[end : end + len(tail)] == tail:
        end += len(tail)
    return start, end
