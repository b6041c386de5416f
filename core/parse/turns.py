"""Blocks of a transcript: one ``turn`` block per turn of speech.

The loader (``core.ingest.transcript``) makes each turn one ``TextLine``; its block spans
the whole line (the ``"Speaker: "`` prefix included), carries the turn's speaker and the
time range in seconds of its cues (``Document.time_range``).
"""

from __future__ import annotations

import bisect
import dataclasses

from core.parse.blocks import make_block
from core.provenance.types import Block, Document


def parse_transcript(doc: Document) -> list[Block | None]:
    cue_starts = [c.char_start for c in doc.cues]
    blocks: list[Block | None] = []
    for line in doc.lines:
        block = make_block(doc, "turn", line.char_start, line.char_end)
        if block is None:
            continue
        first = bisect.bisect_left(cue_starts, block.char_start)
        speaker = doc.cues[first].speaker if first < len(doc.cues) else ""
        time = doc.time_range(block.char_start, block.char_end)
        blocks.append(
            dataclasses.replace(
                block,
                speaker=speaker,
                start_s=None if time is None else time[0],
                end_s=None if time is None else time[1],
            )
        )
    return blocks
