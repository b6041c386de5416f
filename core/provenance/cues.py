"""Timed cues of a transcript, and the time range a span of the canonical text covers.

A cue's span is half-open, ``[char_start, char_end)``, in characters of the document's
canonical text; its times are seconds from the start of the recording. A document's cues
are sorted by ``char_start`` and do not overlap (``core.ingest.transcript`` builds them).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Cue:
    """One timed cue of a transcript: its text's span in the canonical text, its start
    and end in seconds from the start of the recording, and its speaker ("" if none)."""

    char_start: int
    char_end: int
    start_s: float
    end_s: float
    speaker: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.char_start <= self.char_end:
            raise ValueError(f"Cue: bad span [{self.char_start}, {self.char_end})")
        if not 0 <= self.start_s <= self.end_s:
            raise ValueError(f"Cue: bad time range {self.start_s}-{self.end_s} s")


def cue_time_ranges(
    cues: tuple[Cue, ...], spans: list[tuple[int, int]]
) -> list[tuple[float, float] | None]:
    """``Document.time_range`` for many spans at once (two binary searches a span)."""
    if not cues:
        return [None] * len(spans)
    starts = [c.char_start for c in cues]
    ends = [c.char_end for c in cues]
    out: list[tuple[float, float] | None] = []
    for char_start, char_end in spans:
        first = bisect.bisect_right(ends, char_start)
        last = bisect.bisect_left(starts, char_end) - 1
        if char_end <= char_start or first > last:
            out.append(None)
            continue
        inside = cues[first : last + 1]
        out.append((min(c.start_s for c in inside), max(c.end_s for c in inside)))
    return out
