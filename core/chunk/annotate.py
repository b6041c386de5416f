"""What a span overlaps: blocks, their kinds, and the heading path a chunk carries.

Heading paths come from the parser (``core.parse``): every block's ``heading_path`` is
the breadcrumb of the headings that enclose it, and a heading's own path ends with
itself, so the path of a heading block is the path of the section it opens.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from core.provenance.types import BLOCK_KINDS, Block

_KIND_ORDER: tuple[str, ...] = tuple(sorted(BLOCK_KINDS))
_KIND_BIT: dict[str, int] = {kind: k for k, kind in enumerate(_KIND_ORDER)}
_KINDS_OF_MASK: tuple[tuple[str, ...], ...] = tuple(
    tuple(kind for k, kind in enumerate(_KIND_ORDER) if mask >> k & 1)
    for mask in range(1 << len(_KIND_ORDER))
)


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
        self._ends = [b.char_end for b in self.blocks]
        self._kind_table = self._kind_masks() if self._disjoint() else None
        self._start_array = np.asarray(self.starts, dtype=np.int64)
        self._end_array = np.asarray(self._ends, dtype=np.int64)

    def _disjoint(self) -> bool:
        """Whether every block is non-empty and ends at or before the next one starts."""
        blocks = self.blocks
        if any(b.char_end <= b.char_start for b in blocks):
            return False
        return all(a.char_end <= b.char_start for a, b in zip(blocks, blocks[1:], strict=False))

    def _kind_masks(self) -> list[list[int]]:
        """A sparse table of kind bit masks: ``table[j][i]`` is the union of the kinds of
        ``blocks[i : i + 2**j]`` (bit ``k`` stands for ``_KIND_ORDER[k]``)."""
        level = [1 << _KIND_BIT[b.kind] for b in self.blocks]
        table = [level]
        width = 1
        while 2 * width <= len(level):
            previous = table[-1]
            table.append([previous[i] | previous[i + width] for i in range(len(previous) - width)])
            width *= 2
        return table

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
        """Sorted unique kinds of the blocks that overlap ``[start, end)``.

        Disjoint non-empty blocks (what the parsers make) overlap the span exactly when
        they end after ``start`` and start before ``end``: a contiguous index range,
        whose kinds come from a sparse table of kind masks.
        """
        if self._kind_table is None:
            return tuple(sorted({self.blocks[i].kind for i in self.overlapping(start, end)}))
        low = bisect.bisect_right(self._ends, start)
        high = bisect.bisect_left(self.starts, end)
        if high <= low:
            return ()
        j = (high - low).bit_length() - 1
        level = self._kind_table[j]
        return _KINDS_OF_MASK[level[low] | level[high - (1 << j)]]

    def kinds_of(self, starts: np.ndarray, ends: np.ndarray) -> list[tuple[str, ...]]:
        """``kinds`` of many spans (``starts[i]``, ``ends[i]``), found with array searches."""
        table = self._kind_table
        if table is None:
            return [self.kinds(s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        lows = np.searchsorted(self._end_array, starts, side="right").tolist()
        highs = np.searchsorted(self._start_array, ends, side="left").tolist()
        out: list[tuple[str, ...]] = []
        for low, high in zip(lows, highs, strict=True):
            if high <= low:
                out.append(())
                continue
            j = (high - low).bit_length() - 1
            level = table[j]
            out.append(_KINDS_OF_MASK[level[low] | level[high - (1 << j)]])
        return out

    def paths_at(self, positions: np.ndarray) -> list[tuple[str, ...]]:
        """``path_at`` of many positions.

        Among disjoint non-empty blocks, ``at`` is simply the last block that starts at or
        before the position (the one holding it, or the last one before it).
        """
        if self._kind_table is None:
            return [self.path_at(p) for p in positions.tolist()]
        blocks = self.blocks
        found = (np.searchsorted(self._start_array, positions, side="right") - 1).tolist()
        return [blocks[i].heading_path if i >= 0 else () for i in found]

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
