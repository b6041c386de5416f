"""The ``sentence`` policy: windows of ``size`` sentences, ``overlap`` of them shared.

Sentences come from ``sentences.sentence_spans`` with every block boundary as a hard
break (a heading, a list item line or a table row is never glued to the next sentence).
A chunk runs from the start of its first sentence to the end of its last one; the next
window starts ``size - overlap`` sentences later. Sizes are counted in sentences, so no
chunk is ever oversize; its token count can still exceed a model's window, which the
statistics report.
"""

from __future__ import annotations

from core.chunk.analysis import DocAnalysis
from core.chunk.annotate import BlockIndex
from core.chunk.spans import Piece
from core.types import ChunkPolicy


def sentence_pieces(analysis: DocAnalysis, index: BlockIndex, policy: ChunkPolicy) -> list[Piece]:
    sentences = analysis.sentences(index)
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
