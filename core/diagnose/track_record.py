"""How often each suggested cause was a careful reader's cause, on failures no rule was
written on: what a suggestion is worth, shown beside it.

Counted on the blind sets of ``eval/diagnose_blind`` (``BLIND_SETS``: five sets of four
filings, two chunking policies each, every failure judged by two readers who had seen no
rule and no suggestion): for each cause the rules suggested, how many times either reader
named it, and how many times it was suggested. The counts are those of the suggestion
files named in ``SUGGESTIONS`` (the rules of commit ``35cf5e1``, set 21's of ``5cb5d65``:
a second place made weak, which changes no cause); ``tests/test_track_record.py`` counts
them again from those files. A new blind set, or rules that change a cause, are counted
again there.
"""

from __future__ import annotations

from dataclasses import dataclass

BLIND_SETS = ("set16", "set18", "set19", "set20", "set21")
SUGGESTIONS = {
    "set16": "suggested_round4.jsonl",
    "set18": "suggested_now.jsonl",
    "set19": "suggested_now.jsonl",
    "set20": "suggested_now.jsonl",
    "set21": "suggested_now.jsonl",
}
FAILURES = 429  # judged in those sets
FILINGS = 20


@dataclass(frozen=True, slots=True)
class Record:
    cause: str
    readers: int  # times either reader named the suggested cause
    suggested: int  # times the rules suggested it

    @property
    def share(self) -> float:
        return self.readers / self.suggested if self.suggested else 0.0

    def line(self) -> str:
        return (
            f"on {FAILURES} failures of {FILINGS} filings no rule was written on, a suggested "
            f"{self.cause} was a careful reader's cause {self.readers} times in "
            f"{self.suggested} ({self.share:.0%})"
        )


RECORDS = {
    r.cause: r
    for r in (
        Record("boundary", 53, 93),
        Record("method", 62, 130),
        Record("context", 47, 78),
        Record("vocabulary", 22, 44),
        Record("label", 13, 62),
    )
}


def record_of(cause: str) -> Record | None:
    """The measured record of a suggested ``cause`` (None for unclear or a cause never
    suggested on the blind sets, parse)."""
    return RECORDS.get(cause)
