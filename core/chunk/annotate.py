"""What a span overlaps: blocks, their kinds, and the heading path a chunk carries.

Heading paths come from the parser (``core.parse``): every block's ``heading_path`` is
the breadcrumb of the headings that enclose it, and a heading's own path ends with
itself, so the path of a heading block is the path of the section it opens.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from core.types import Block


class BlockIndex:
    """Blocks sorted by start, with fast lookups by character span.

    Blocks may leave gaps (text that no block holds) and may, from a careless parser,
    overlap; lookups stay correct in both cases.
    """

    def __init__(self, blocks: Sequence[Block]) -> None:
        self.blocks: tuple[Block, ...] = tuple(
            sorted(blocks, key=lambda b: (b.char_start, b.char_end))
        )
        self.starts = [b.char_start for b in self.blocks]
        running = 0
        self.max_ends: list[int] = []
        for block in self.blocks:
            running = max(running, block.char_end)
            self.max_ends.append(running)
        self.sentences: list[tuple[int, int]] | None = None  # filled by DocAnalysis
        self.derived: dict[str, object] = {}  # what chunkers derive from the blocks alone

    def __len__(self) -> int:
        return len(self.blocks)

    def overlapping(self, start: int, end: int) -> list[int]:
        """Indices of blocks sharing at least one character with ``[start, end)``."""
        low = bisect.bisect_right(self.max_ends, start)
        high = bisect.bisect_left(self.starts, end)
        return [
            i
            for i in range(low, high)
            if self.blocks[i].char_end > start
            and self.blocks[i].char_end > self.blocks[i].char_start
        ]

    def kinds(self, start: int, end: int) -> tuple[str, ...]:
        """Sorted unique kinds of the blocks that overlap ``[start, end)``."""
        return tuple(sorted({self.blocks[i].kind for i in self.overlapping(start, end)}))

    def at(self, position: int) -> int | None:
        """The block holding ``position``, else the last block that starts before it."""
        index = bisect.bisect_right(self.starts, position) - 1
        if index < 0:
            return None
        for candidate in range(index, -1, -1):
            block = self.blocks[candidate]
            if block.char_start <= position < block.char_end:
                return candidate
            if self.max_ends[candidate] <= position:
                break
        return index

    def path(self, index: int | None) -> tuple[str, ...]:
        """Heading path of block ``index`` (``()`` for ``None``)."""
        return () if index is None else self.blocks[index].heading_path

    def path_at(self, position: int) -> tuple[str, ...]:
        return self.path(self.at(position))
