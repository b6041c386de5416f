"""The ``sentence`` policy: windows of ``size`` sentences, ``overlap`` of them shared.

Sentences come from ``sentence_bounds.sentence_spans`` with every block boundary as a
hard break (a heading, a list item line or a table row is never glued to the next sentence).
A chunk runs from the start of its first sentence to the end of its last one; the next
window starts ``size - overlap`` sentences later. Sizes are counted in sentences, so no
chunk is ever oversize; its token count can still exceed a model's window, which the
statistics report. With ``skip_garbled`` the sentences of garbled blocks are left out
and windows run region by region between those blocks (``skip.kept_regions``).
"""

from __future__ import annotations

import bisect

from core.chunk.analysis import DocAnalysis
from core.chunk.annotate import BlockIndex
from core.chunk.skip import kept_regions
from core.chunk.spans import Piece, strip_span
from core.provenance.types import ChunkPolicy


def sentence_pieces(analysis: DocAnalysis, index: BlockIndex, policy: ChunkPolicy) -> list[Piece]:
    sentences = analysis.sentences(index)
    regions = kept_regions(len(analysis.text), index, policy)
    if len(regions) == 1 and regions[0] == (0, len(analysis.text)):
        return _windows(sentences, policy)
    starts = [s for s, _ in sentences]
    pieces: list[Piece] = []
    for lo, hi in regions:
        inside = []
        for start, end in sentences[max(0, bisect.bisect_right(starts, lo) - 1) :]:
            if start >= hi:
                break
            start, end = strip_span(analysis.text, max(start, lo), min(end, hi))
            if start < end:
                inside.append((start, end))
        pieces.extend(_windows(inside, policy))
    return pieces


def _windows(sentences: list[tuple[int, int]], policy: ChunkPolicy) -> list[Piece]:
    step = policy.size - policy.overlap
    pieces: list[Piece] = []
    first = 0
    while first < len(sentences):
        last = min(first + policy.size, len(sentences))
        pieces.append(Piece(char_start=sentences[first][0], char_end=sentences[last - 1][1]))
        if last == len(sentences):
            break
        first += step
    return pieces
