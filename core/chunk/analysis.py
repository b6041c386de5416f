"""Per-document work shared by every policy: token cells, sentences and token counts.

Re-chunking a document under another policy must not re-tokenize it or re-split its
sentences, so that work lives in a ``DocAnalysis`` kept in a small LRU cache keyed by
the document (``doc_id``, ``sha256`` and the text itself) and the tokenizer's name.

Token cells. The tokenizer's spans do not cover the text (whitespace and characters its
normaliser drops belong to no token), so the text is cut into *cells*: cell ``k`` runs
from the start of token ``k`` to the start of token ``k + 1`` (the first cell from 0, the
last to the end of the text). Tokens that share a start (byte-level pieces of one
character) share a cell. Every character lies in exactly one cell, so windows of whole
cells cover the text; ``cell_tokens[k]`` is the number of tokens in cells ``0..k-1``.

Token counts. A chunk's ``token_count`` is ``tokenizer.count`` of its text. For
tokenizers that are ``exact_on_word_edges`` (BERT WordPiece: words tokenize on their
own), the text between two word edges of the document (positions no pre-tokenizer word
straddles) holds exactly the document tokens inside it, and a word edge of the document
is a word edge of every substring. So a span's count is the cells' count between its
first and last inner word edge plus the counts of the partial words at its two ends,
which alone are tokenized (in batches, cached). Other tokenizers tokenize whole spans.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence

import numpy as np

from core.bounded_cache import BoundedCache
from core.chunk.annotate import BlockIndex
from core.chunk.sentence_bounds import sentence_spans
from core.model.tokens import Tokenizer, count_many
from core.provenance.types import Block, Document

_CACHE_SIZE = 8
_MAX_CACHED_COUNTS = 500_000
_CACHE: BoundedCache[tuple[object, ...], DocAnalysis] = BoundedCache(_CACHE_SIZE)


class DocAnalysis:
    """Facts about one document's text under one tokenizer.

    The text is tokenized on construction (every chunking needs token counts); the
    sentences, page runs and block index are computed on first use.

    ``cell_starts``: distinct token starts, ascending (empty when the text has no
    token). Cell ``k`` is ``[cell_starts[k], cell_starts[k + 1])``, except that the
    first cell begins at 0 (``cell_start``) so that the cells cover the text.
    ``cell_tokens``: prefix sums, tokens in cells ``[0, k)``; one longer than
    ``cell_starts``.
    """

    def __init__(self, doc: Document, tokenizer: Tokenizer) -> None:
        self.doc = doc  # a live policy's splitter reads its pages
        self.doc_id = doc.doc_id
        self.doc_sha256 = doc.sha256
        self.text = doc.text
        self.tokenizer = tokenizer
        self.cell_starts: list[int] = []
        self.cell_tokens: list[int] = [0]
        self._word_starts: list[int] = []
        self._word_ends: list[int] = []
        self._exact = bool(getattr(tokenizer, "exact_on_word_edges", False))
        self._run_starts: list[int] | None = None
        self._run_pages: list[int] = []
        self._real_before: array[int] | None = None  # non-inserted chars before i
        self._real_pages: array[int] = array("i")
        self._distinct_pages: list[int] = []
        self._index_entry: tuple[tuple[Block, ...], BlockIndex] | None = None
        self._text_counts: dict[str, int] = {}  # counts of tokenized fragments, by text
        self._arrays: tuple[np.ndarray, ...] | None = None  # ``_plans``' lookup arrays
        self._tokenize()

    # -- tokens -------------------------------------------------------------------------
    def _tokenize(self) -> None:
        token_words = getattr(self.tokenizer, "token_words", None)
        if token_words is not None:
            triples = token_words(self.text)
        else:
            triples = [(a, b, k) for k, (a, b) in enumerate(self.tokenizer.token_spans(self.text))]
        starts: list[int] = []
        totals: list[int] = [0]
        words: dict[int, tuple[int, int]] = {}
        for start, end, word in triples:
            if starts and start <= starts[-1]:
                totals[-1] += 1
            else:
                starts.append(start)
                totals.append(totals[-1] + 1)
            low, high = words.get(word, (start, end))
            words[word] = (min(low, start), max(high, end))
        spans = sorted(words.values())
        self._word_starts = [a for a, _ in spans]
        self._word_ends = [b for _, b in spans]
        self.cell_starts = starts
        self.cell_tokens = totals

    def cell_start(self, k: int) -> int:
        return 0 if k == 0 else self.cell_starts[k]

    def cell_end(self, k: int) -> int:
        starts = self.cell_starts
        return starts[k + 1] if k + 1 < len(starts) else len(self.text)

    def tokens_within(self, start: int, end: int) -> int:
        """Document tokens that start in ``[start, end)``: a fast size estimate.

        Exact (equal to ``count``) when both ends are word edges (no word of the
        document straddles them) and the tokenizer is ``exact_on_word_edges``.
        """
        starts = self.cell_starts
        first = bisect.bisect_left(starts, start)
        last = bisect.bisect_left(starts, end)
        return self.cell_tokens[last] - self.cell_tokens[first]

    # -- counts -------------------------------------------------------------------------
    def _plan(self, start: int, end: int) -> tuple[list[tuple[int, int]], int]:
        """How to count ``[start, end)``: spans to tokenize, plus tokens read from cells.

        With an ``exact_on_word_edges`` tokenizer the span splits at its first and last
        inner word edge: the whole words between them are counted from the cells, and
        only the partial words at either end are tokenized. Otherwise the whole span is.
        """
        if not self._exact or start >= end:
            return ([(start, end)] if start < end else []), 0
        word_starts, word_ends = self._word_starts, self._word_ends
        inner_start, inner_end = start, end
        i = bisect.bisect_left(word_starts, start) - 1  # the word around start, if any
        if i >= 0 and word_ends[i] > start:
            inner_start = word_ends[i]
        i = bisect.bisect_left(word_starts, end) - 1  # the word around end, if any
        if i >= 0 and word_ends[i] > end:
            inner_end = word_starts[i]
        if inner_start > inner_end:  # both ends inside one word
            return [(start, end)], 0
        parts = [(a, b) for a, b in ((start, inner_start), (inner_end, end)) if a < b]
        cells, totals = self.cell_starts, self.cell_tokens
        within = (
            totals[bisect.bisect_left(cells, inner_end)]
            - totals[bisect.bisect_left(cells, inner_start)]
        )
        return parts, within

    def count(self, start: int, end: int) -> int:
        """``tokenizer.count(text[start:end])``, exactly (see ``_plan``); parts cached by text."""
        parts, from_cells = self._plan(start, end)
        return from_cells + sum(self._tokenized(a, b) for a, b in parts)

    def _tokenized(self, start: int, end: int) -> int:
        fragment = self.text[start:end]
        found = self._text_counts.get(fragment)
        if found is None:
            found = self.tokenizer.count(fragment)
            self._remember({fragment: found})
        return found

    def counts(self, spans: Sequence[tuple[int, int]]) -> list[int]:
        """``count`` of many spans; the parts that need the tokenizer go in one batch.

        A count depends on the text alone, so parts are cached by their text: the same
        fragment at another place (a word cut at the same letter) is not tokenized again.
        """
        if not spans:
            return []
        parts, within = self._plans(spans)
        text, known = self.text, self._text_counts
        fragments = [[text[a:b] for a, b in pair] for pair in parts]
        unknown = list(dict.fromkeys(f for pair in fragments for f in pair if f not in known))
        if unknown:
            batch = dict(zip(unknown, count_many(self.tokenizer, unknown), strict=True))
            self._remember(batch)
            if self._text_counts is not known:  # the cache was renewed: keep both here
                known = {**known, **batch}
        return [
            total + sum(known[f] for f in pair)
            for pair, total in zip(fragments, within, strict=True)
        ]

    def _plans(
        self, spans: Sequence[tuple[int, int]]
    ) -> tuple[list[list[tuple[int, int]]], list[int]]:
        """``_plan`` of every span at once: the same splits, found with array searches."""
        if not self._exact:
            plans = [self._plan(s, e) for s, e in spans]
            return [p for p, _ in plans], [w for _, w in plans]
        if self._arrays is None:
            self._arrays = tuple(
                np.asarray(values, dtype=np.int64)
                for values in (self._word_starts, self._word_ends, self.cell_starts)
            ) + (np.asarray(self.cell_tokens, dtype=np.int64),)
        word_starts, word_ends, cells, totals = self._arrays
        bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        starts, ends = bounds[:, 0], bounds[:, 1]
        inner_start, inner_end = starts.copy(), ends.copy()
        if len(word_starts):
            i = np.searchsorted(word_starts, starts, side="left") - 1  # the word around start
            hit = (i >= 0) & (word_ends[np.maximum(i, 0)] > starts)
            inner_start[hit] = word_ends[i[hit]]
            i = np.searchsorted(word_starts, ends, side="left") - 1  # the word around end
            hit = (i >= 0) & (word_ends[np.maximum(i, 0)] > ends)
            inner_end[hit] = word_starts[i[hit]]
        whole = (inner_start > inner_end) | (starts >= ends)  # one word, or empty
        inner_start[whole] = ends[whole]
        inner_end[whole] = ends[whole]
        within = (
            totals[np.searchsorted(cells, inner_end, side="left")]
            - totals[np.searchsorted(cells, inner_start, side="left")]
        )
        rows = np.stack((starts, inner_start, inner_end, ends), axis=1).tolist()
        parts = [[(a, b) for a, b in ((s, i), (j, e)) if a < b] for s, i, j, e in rows]
        return parts, within.tolist()

    def _remember(self, counts: dict[str, int]) -> None:
        """Add to the fragment cache; a full cache is replaced, never cleared in place."""
        if len(self._text_counts) + len(counts) > _MAX_CACHED_COUNTS:
            self._text_counts = {}
        self._text_counts.update(counts)

    # -- pages --------------------------------------------------------------------------
    def pages_of(self, doc: Document, start: int, end: int) -> tuple[int, ...]:
        """``doc.pages_of(start, end)``: pages of the span's non-inserted characters.

        When the page numbers of the non-inserted characters never decrease along the
        text (what ingest builds), the span's pages are those from the page of its first
        to the page of its last such character, found through a prefix count of them;
        otherwise runs of equal ``char_page`` values are scanned.
        """
        if doc.char_page is None or end <= start:
            return ()
        if self._run_starts is None:
            self._index_pages(np.asarray(doc.char_page))
        before = self._real_before
        if before is not None:
            last_position = len(before) - 1
            first = before[min(start, last_position)]
            stop = before[min(end, last_position)]
            if stop <= first:
                return ()
            low, high = self._real_pages[first], self._real_pages[stop - 1]
            if low == high:
                return (low,)
            distinct = self._distinct_pages
            return tuple(
                distinct[bisect.bisect_left(distinct, low) : bisect.bisect_right(distinct, high)]
            )
        run_starts = self._run_starts
        assert run_starts is not None  # _index_pages set it above
        first = bisect.bisect_right(run_starts, start) - 1
        last = bisect.bisect_left(run_starts, end)
        return tuple(sorted({p for p in self._run_pages[first:last] if p > 0}))

    def pages_of_spans(self, doc: Document, starts: np.ndarray, ends: np.ndarray) -> list:
        """``pages_of`` of many spans (``starts[i]``, ``ends[i]``); the prefix counts and
        the first and last pages are looked up for all spans at once."""
        if doc.char_page is None:
            return [()] * len(starts)
        if self._run_starts is None:
            self._index_pages(np.asarray(doc.char_page))
        before, real_pages = self._real_before, self._real_pages
        if before is None or not real_pages:
            return [
                self.pages_of(doc, s, e)
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
            ]
        prefix = np.frombuffer(before, dtype=np.int32)
        pages = np.frombuffer(real_pages, dtype=np.int32)
        last_position, last_real = len(prefix) - 1, len(pages) - 1
        firsts = prefix[np.minimum(starts, last_position)]
        stops = prefix[np.minimum(ends, last_position)]
        present = ((stops > firsts) & (ends > starts)).tolist()
        lows = pages[np.clip(firsts, 0, last_real)].tolist()
        highs = pages[np.clip(stops - 1, 0, last_real)].tolist()
        distinct = self._distinct_pages
        out: list[tuple[int, ...]] = []
        for there, low, high in zip(present, lows, highs, strict=True):
            if not there:
                out.append(())
            elif low == high:
                out.append((low,))
            else:
                first = bisect.bisect_left(distinct, low)
                out.append(tuple(distinct[first : bisect.bisect_right(distinct, high)]))
        return out

    def _index_pages(self, pages: np.ndarray) -> None:
        """Prefix counts and pages of the non-inserted characters (when their pages never
        decrease), else runs of equal values."""
        real = pages > 0
        values = pages[real]
        if np.all(values[1:] >= values[:-1]):
            counts = np.zeros(len(pages) + 1, dtype=np.int32)
            np.cumsum(real, out=counts[1:])
            self._real_before = array("i", counts.tobytes())
            self._real_pages = array("i", values.astype(np.int32).tobytes())
            self._distinct_pages = np.unique(values).tolist()
        starts = np.concatenate(([0], np.flatnonzero(pages[1:] != pages[:-1]) + 1))
        self._run_starts = starts.tolist()
        self._run_pages = pages[starts].tolist() if len(pages) else []

    # -- blocks and sentences ---------------------------------------------------------
    def block_index(self, blocks: Sequence[Block]) -> BlockIndex:
        """The index of ``blocks``, reused while the same blocks come back.

        Raises ``ValueError`` when a block belongs to another document.
        """
        key = tuple(blocks)
        entry = self._index_entry  # one read: another thread may replace it meanwhile
        if entry is not None and entry[0] == key:
            return entry[1]
        for block in key:
            if block.char_end > len(self.text) or (block.doc_id, block.doc_sha256) != (
                self.doc_id,
                self.doc_sha256,
            ):
                raise ValueError(
                    f"block [{block.char_start}, {block.char_end}) of {block.doc_id!r} "
                    f"does not belong to {self.doc_id!r} ({len(self.text)} chars)"
                )
        index = BlockIndex(key)
        self._index_entry = (key, index)
        return index

    def sentences(self, index: BlockIndex) -> list[tuple[int, int]]:
        """Sentence spans with every block boundary as a hard break (see ``sentences``)."""
        if index.sentences is None:
            breaks = {b.char_start for b in index.blocks} | {b.char_end for b in index.blocks}
            index.sentences = sentence_spans(self.text, breaks)
        return index.sentences


def analysis_for(doc: Document, tokenizer: Tokenizer) -> DocAnalysis:
    """The cached analysis of ``doc`` under ``tokenizer`` (built on first use).

    Safe to call from several threads; two threads may both build a missing analysis,
    and the later one is kept. An entry under the same key made for another tokenizer
    object or another text (a hash collision) is replaced.
    """
    key = (doc.doc_id, doc.sha256, len(doc.text), hash(doc.text), tokenizer.name)
    found = _CACHE.get(key)
    if found is not None and found.tokenizer is tokenizer and found.text == doc.text:
        return found
    built = DocAnalysis(doc, tokenizer)
    _CACHE.put(key, built)
    return built


def nonspace_mask(text: str) -> np.ndarray:
    """Boolean array: ``True`` where ``text[i]`` is not whitespace."""
    if not text:
        return np.zeros(0, dtype=bool)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    space = np.zeros(len(codes), dtype=bool)
    for char in {c for c in set(text) if c.isspace()}:
        space |= codes == ord(char)
    return ~space
