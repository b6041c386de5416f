"""The track record shown beside a suggestion (``core.diagnose.track_record``) is what the
blind sets' files count: the readers' causes against the suggestions measured blind."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from core.diagnose import track_record as tr

BLIND = Path(__file__).resolve().parents[1] / "eval" / "diagnose_blind"


def _causes(path: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["case"]: r["cause"] for r in rows}


def test_the_records_are_the_blind_sets_counts():
    readers: Counter[str] = Counter()
    said: Counter[str] = Counter()
    judged = 0
    for name in tr.BLIND_SETS:
        a = _causes(BLIND / name / "judgement_a.jsonl")
        b = _causes(BLIND / name / "judgement_b.jsonl")
        suggested = _causes(BLIND / name / tr.SUGGESTIONS[name])
        assert set(suggested) == set(a) == set(b), name
        judged += len(a)
        for case, cause in suggested.items():
            said[cause] += 1
            readers[cause] += cause in (a[case], b[case])
    assert judged == tr.FAILURES
    named = {c for c in said if c != "unclear"}
    assert named == set(tr.RECORDS)
    for cause in named:
        record = tr.record_of(cause)
        assert (record.readers, record.suggested) == (readers[cause], said[cause]), cause
    assert tr.record_of("unclear") is None


def test_a_record_reads_as_a_sentence():
    line = tr.record_of("label").line()
    assert line.startswith("on 429 failures of 20 filings no rule was written on, a ")
    assert "suggested label was a careful reader's cause 13 times in 62 (21%)" in line
