"""Numbers that describe one chunking of one document (for the UI and the benchmark).

Shares are fractions in ``[0, 1]`` (0 when there is nothing to divide by). Character
counts are code points of ``doc.text``. Token counts are the chunks' ``token_count``
(no special tokens), compared with ``max_tokens``, the number of text tokens the
model's window holds.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from core.chunk.analysis import analysis_for, nonspace_mask
from core.model.tokens import Tokenizer
from core.provenance.types import Block, Chunk, Document


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkStats:
    """Summary of a chunking.

    ``overlap_share``: characters held by more than one chunk / characters held by any.
    ``duplicate_share``: chunks whose text equals an earlier chunk's text / chunks.
    ``coverage_share``: non-whitespace characters held by some chunk / all of them.
    ``n_crossing_page``: chunks on more than one page. ``n_crossing_heading``: chunks
    inside which a heading block starts (not at the chunk's first character).
    ``n_splitting_sentence``: chunks with an edge strictly inside a sentence.
    """

    n_chunks: int
    token_counts: tuple[int, ...]
    tokens_min: int
    tokens_median: float
    tokens_mean: float
    tokens_max: int
    chars_mean: float
    max_tokens: int
    n_over_window: int
    share_over_window: float
    overlap_share: float
    duplicate_share: float
    coverage_share: float
    n_crossing_page: int
    n_crossing_heading: int
    n_splitting_sentence: int
    n_oversize: int

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["token_counts"] = list(self.token_counts)
        return out


def chunk_stats(
    doc: Document,
    chunks: Sequence[Chunk],
    blocks: Sequence[Block],
    tokenizer: Tokenizer,
    max_tokens: int,
) -> ChunkStats:
    """Statistics of ``chunks`` (of ``doc``), with sentences split as the chunkers do."""
    analysis = analysis_for(doc, tokenizer)
    index = analysis.block_index(blocks)
    sentences = analysis.sentences(index)
    counts = [c.token_count for c in chunks]
    n = len(chunks)
    over = sum(1 for c in counts if c > max_tokens)
    heading_starts = sorted(b.char_start for b in index.blocks if b.kind == "heading")
    return ChunkStats(
        n_chunks=n,
        token_counts=tuple(counts),
        tokens_min=min(counts, default=0),
        tokens_median=float(statistics.median(counts)) if counts else 0.0,
        tokens_mean=float(statistics.fmean(counts)) if counts else 0.0,
        tokens_max=max(counts, default=0),
        chars_mean=float(statistics.fmean(len(c.text) for c in chunks)) if chunks else 0.0,
        max_tokens=max_tokens,
        n_over_window=over,
        share_over_window=over / n if n else 0.0,
        overlap_share=_overlap_share(doc.text, chunks),
        duplicate_share=(n - len({c.text for c in chunks})) / n if n else 0.0,
        coverage_share=_coverage_share(doc.text, chunks),
        n_crossing_page=sum(1 for c in chunks if len(c.pages) > 1),
        n_crossing_heading=sum(1 for c in chunks if _holds_start(heading_starts, c)),
        n_splitting_sentence=sum(1 for c in chunks if _splits_sentence(sentences, c)),
        n_oversize=sum(1 for c in chunks if c.oversize),
    )


def _depth(length: int, chunks: Sequence[Chunk]) -> np.ndarray:
    """How many chunks hold each character."""
    delta = np.zeros(length + 1, dtype=np.int32)
    for chunk in chunks:
        delta[chunk.char_start] += 1
        delta[chunk.char_end] -= 1
    return np.cumsum(delta[:-1])


def _overlap_share(text: str, chunks: Sequence[Chunk]) -> float:
    depth = _depth(len(text), chunks)
    held = int(np.count_nonzero(depth))
    return int(np.count_nonzero(depth > 1)) / held if held else 0.0


def _coverage_share(text: str, chunks: Sequence[Chunk]) -> float:
    content = nonspace_mask(text)
    total = int(content.sum())
    if not total:
        return 0.0
    return int((content & (_depth(len(text), chunks) > 0)).sum()) / total


def _holds_start(starts: list[int], chunk: Chunk) -> bool:
    i = bisect.bisect_right(starts, chunk.char_start)
    return i < len(starts) and starts[i] < chunk.char_end


def _splits_sentence(sentences: list[tuple[int, int]], chunk: Chunk) -> bool:
    return _inside(sentences, chunk.char_start) or _inside(sentences, chunk.char_end)


def _inside(sentences: list[tuple[int, int]], position: int) -> bool:
    """Whether ``position`` lies strictly inside a sentence."""
    i = bisect.bisect_right(sentences, (position, 1 << 62)) - 1
    return i >= 0 and sentences[i][0] < position < sentences[i][1]
