"""What a policy leaves out of every chunk: with ``skip_garbled``, the garbled blocks.

A skipped block is in no chunk, and no chunk spans across one: the text between skipped
blocks is chunked region by region. Positions are code-point offsets into the canonical
text; regions are half-open, ascending and disjoint, and together they hold every
character outside the skipped blocks.
"""

from __future__ import annotations

from core.chunk.annotate import BlockIndex
from core.provenance.types import Block, ChunkPolicy


def skipped(block: Block, policy: ChunkPolicy) -> bool:
    """Whether ``policy`` leaves ``block`` out of every chunk."""
    return policy.skip_garbled and block.garbled


def kept_regions(text_length: int, index: BlockIndex, policy: ChunkPolicy) -> list[tuple[int, int]]:
    """``[(lo, hi), ...]``: the text outside the blocks ``policy`` skips (the whole text,
    ``[(0, text_length)]``, when it skips none)."""
    regions: list[tuple[int, int]] = []
    position = 0
    for block in index.blocks:
        if not skipped(block, policy):
            continue
        if block.char_start > position:
            regions.append((position, block.char_start))
        position = max(position, block.char_end)
    if position < text_length or not regions:
        regions.append((position, text_length))
    return regions
