"""The structure policy's packer: units placed greedily, in order, into chunks.

A ``Unit`` is the smallest span the packer places and never splits (a block that fits,
or a sentence, list item, table row or code line of one that does not). ``pack`` fills
chunks while ``fits`` says the span from a chunk's first unit to the next one fits; when
it does not, the chunk may end earlier so that a claim opens the next chunk with its
qualifier, or a speaker's first sentences move on with the rest of their turn, and
sentences of one split block may be repeated as overlap (rules 3, 4, 6 and 7 of
``core.chunk.structure``). Positions are code-point offsets into the canonical text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from core.chunk.spans import Measure


class Unit(NamedTuple):
    """Smallest thing the packer places: a stripped span that it never splits.

    A named tuple rather than a dataclass: thousands are made per document, and this
    working record never leaves the structure policy.
    """

    char_start: int
    char_end: int
    section: int  # index of the section (heading run) it belongs to
    heading_block: int | None  # block whose heading path chunks of this unit carry
    group: int | None = None  # sentences of one split block share a group (overlap)
    heading: bool = False
    turn: bool = False  # part of a transcript turn (rule 7)
    qualifier: bool = False
    break_before: bool = False  # a chunk must start here (section start, after a header)
    oversize: bool = False


def pack(
    units: Sequence[Unit], fits: Callable[[int, int], bool], measure: Measure, overlap: int
) -> list[list[Unit]]:
    """Greedy packing in order; see rules 3, 4, 6 and 7 of ``core.chunk.structure``."""
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    for unit in units:
        if current and not unit.break_before and fits(current[0].char_start, unit.char_end):
            current.append(unit)
            continue
        carried: list[Unit] = []
        if current and not unit.break_before:
            carried = _qualifier_carry(current, unit, fits)
            if carried:
                current = current[:-1]
            elif carried := _turn_carry(current, unit, fits):
                current = current[: -len(carried)]
            else:
                carried = _overlap_carry(current, unit, fits, measure, overlap)
        if current:
            chunks.append(current)
        current = [*carried, unit]
    if current:
        chunks.append(current)
    return chunks


def _qualifier_carry(
    current: list[Unit], unit: Unit, fits: Callable[[int, int], bool]
) -> list[Unit]:
    claim = current[-1]
    if not unit.qualifier or len(current) < 2 or claim.heading:
        return []
    if not any(not u.heading for u in current[:-1]):
        return []
    return [claim] if fits(claim.char_start, unit.char_end) else []


def _turn_carry(current: list[Unit], unit: Unit, fits: Callable[[int, int], bool]) -> list[Unit]:
    """The leading sentences of ``unit``'s turn at the end of ``current``, when an earlier
    turn precedes them in the chunk and they fit with ``unit`` (structure's rule 7)."""
    if not unit.turn or unit.group is None:
        return []
    k = len(current)
    while k > 0 and current[k - 1].group == unit.group:
        k -= 1
    if k == len(current) or k == 0 or not any(not u.heading for u in current[:k]):
        return []
    return current[k:] if fits(current[k].char_start, unit.char_end) else []


def _overlap_carry(
    current: list[Unit],
    unit: Unit,
    fits: Callable[[int, int], bool],
    measure: Measure,
    overlap: int,
) -> list[Unit]:
    """Trailing sentences of ``current`` from ``unit``'s block that fit in ``overlap``."""
    if overlap <= 0 or unit.group is None:
        return []
    carried: list[Unit] = []
    for previous in reversed(current[1:]):
        if previous.group != unit.group:
            break
        if measure.estimate(previous.char_start, current[-1].char_end) > overlap:
            break
        carried.insert(0, previous)
    while carried and not fits(carried[0].char_start, unit.char_end):
        carried.pop(0)
    return carried


def cut_unit(unit: Unit, measure: Measure) -> list[Unit]:
    pieces = measure.cut(unit.char_start, unit.char_end)
    return [
        unit._replace(
            char_start=p.char_start,
            char_end=p.char_end,
            oversize=p.oversize,
            group=None,
            break_before=unit.break_before and i == 0,
        )
        for i, p in enumerate(pieces)
    ]
