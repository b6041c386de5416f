"""The points of a sweep: every (policy, size, overlap) the user asked for.

Sizes are counted in the policy's unit (characters, tokens or sentences, as
``core.chunk.policy_from_args``). An overlap is either a count in that unit (``20``) or a
share of the size (``10%``: ``size * 10 // 100``, rounded down), so one overlap list fits
every size. Points keep the order asked (policies, then sizes, then overlaps); two
entries that give the same policy are one point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.chunk import PolicyError, policy_from_args
from core.provenance.types import ChunkPolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class GridPoint:
    """One point: its policy, and the overlap as asked (``"10%"`` or ``"20"``)."""

    policy: ChunkPolicy
    overlap_asked: str


def _items(text: str, what: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise PolicyError(f"give at least one value for {what}")
    return items


def parse_sizes(text: str) -> tuple[int, ...]:
    """``"64,128,256"`` -> ``(64, 128, 256)``; each a positive integer."""
    try:
        sizes = tuple(int(s) for s in _items(text, "--size"))
    except ValueError:
        raise PolicyError(f"--size takes comma-separated positive integers, got {text!r}") from None
    if min(sizes) < 1:
        raise PolicyError("--size values must be at least 1")
    return sizes


def parse_overlaps(text: str) -> tuple[str, ...]:
    """``"0,10%,20"`` checked: integers >= 0 or percentages in [0, 100)."""
    out = []
    for item in _items(text, "--overlap"):
        number = item[:-1] if item.endswith("%") else item
        try:
            value = int(number)
        except ValueError:
            raise PolicyError(
                f"--overlap takes counts or percentages (0,10%,20), got {item!r}"
            ) from None
        if value < 0 or (item.endswith("%") and value >= 100):
            raise PolicyError(f"--overlap {item} is out of range (0 or more; a share below 100%)")
        out.append(item)
    return tuple(out)


def overlap_for(size: int, asked: str) -> int:
    """The overlap in units for ``size``: a share rounds down, a count is as given."""
    if asked.endswith("%"):
        return size * int(asked[:-1]) // 100
    return int(asked)


def parse_grid(
    policies: Sequence[str],
    sizes: Sequence[int],
    overlaps: Sequence[str],
    unit: str | None = None,
) -> list[GridPoint]:
    """Every point, in order; ``PolicyError`` names the first impossible one."""
    points: list[GridPoint] = []
    seen: set[str] = set()
    for name in policies:
        for size in sizes:
            for asked in overlaps:
                overlap = overlap_for(size, asked)
                if overlap >= size:
                    raise PolicyError(
                        f"overlap {asked} is not below size {size}: drop it or use a share (20%)"
                    )
                policy = policy_from_args(name, size, overlap, unit)
                if policy.key not in seen:
                    seen.add(policy.key)
                    points.append(GridPoint(policy=policy, overlap_asked=asked))
    return points
