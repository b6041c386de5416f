"""The typed record reader: every stored record reads back as written, and a malformed
one fails with one line naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import LabelError, RecordError
from core.evaluate.bootstrap import DeltaInterval
from core.evaluate.run_file import EvalRun, RankedHit, load_run
from core.provenance.cite import Citation
from core.provenance.serial import Fields, as_bool, as_float, as_int, as_str, optional

GOLDEN_EVAL = Path(__file__).parent / "data" / "golden" / "eval.json"


def _golden_run() -> dict:
    """The golden eval output, its volatile timings (a placeholder there) made real."""
    data = json.loads(GOLDEN_EVAL.read_text("utf-8"))
    data["timings"] = {"total_s": 1.5}
    return data


def test_the_golden_eval_output_reads_back_to_the_same_json():
    data = _golden_run()
    run = EvalRun.from_dict(data)
    with_hits = "chunks" in data
    assert run.to_dict(with_hits=with_hits) == data


@pytest.mark.parametrize(
    ("read", "value", "expected"),
    [
        (as_int, 3, 3),
        (as_int, 3.0, 3),
        (as_float, 2, 2.0),
        (as_float, 0.5, 0.5),
        (as_bool, True, True),
        (as_bool, 0, False),
        (as_str, "x", "x"),
        (optional(as_int), None, None),
    ],
)
def test_readers_accept_what_the_writers_produce(read, value, expected):
    got = read(value, "f")
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("read", "value"),
    [(as_int, True), (as_int, 2.5), (as_int, "3"), (as_float, "1.0"), (as_float, False),
     (as_bool, 2), (as_bool, "yes"), (as_str, 7), (as_int, None)],
)  # fmt: skip
def test_readers_refuse_other_types_naming_the_field(read, value):
    with pytest.raises(RecordError, match=r"^run\.queries\[2\]\.rank: expected "):
        read(value, "run.queries[2].rank")


def test_a_missing_field_is_named_with_its_path():
    fields = Fields({"outer": {"inner": {}}}, "sweep.json")
    with pytest.raises(RecordError, match=r"^sweep\.json\.outer\.inner: the field 'n' is missing$"):
        fields.record("outer").record("inner").integer("n")


def test_a_record_that_is_not_an_object_is_refused():
    with pytest.raises(RecordError, match=r"^hit: expected an object, got \[1, 2\]$"):
        RankedHit.from_dict([1, 2])


def test_records_round_trip():
    hit = RankedHit(chunk_id="c1", rank=2, score=0.25)
    assert RankedHit.from_dict(hit.to_dict()) == hit
    delta = DeltaInterval(delta=0.1, low=-0.2, high=0.3, n=4)
    assert DeltaInterval.from_dict(delta.to_dict()) == delta
    cite = Citation(doc_id="d", doc_sha256="s", char_start=1, char_end=3, quote="ab", pages=(2,))
    assert Citation.from_dict(cite.to_dict()) == cite


def test_a_run_written_by_an_older_format_reads_its_cosine_as_the_score():
    assert RankedHit.from_dict({"chunk_id": "c", "rank": 1, "cosine": 0.5}).score == 0.5


def test_a_malformed_run_file_gives_one_line_naming_the_field(tmp_path):
    data = _golden_run()
    data["queries"][0]["ranks"][data["methods"][0]] = "first"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(LabelError) as caught:
        load_run(path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"run.queries[0].ranks.{data['methods'][0]}: expected an integer, got 'first'" in message


def test_a_malformed_store_record_names_the_record_and_the_field():
    from core.store.chroma_records import hit_from_record

    meta = {"char_start": "0", "char_end": 2, "method": "naive"}
    with pytest.raises(RecordError, match=r"^record c1\.char_start: expected an integer, got '0'$"):
        hit_from_record("c1", meta, "ab", score=0.5, rank=1)


def test_a_triage_row_with_a_null_column_is_refused_by_name():
    from core.evaluate.triage import _tag_of

    row = ("run-1", "q1", "sha", "boundary", None, "late", "2026-01-01", "")
    with pytest.raises(RecordError, match=r"^triage tag\.note: expected a string, got None$"):
        _tag_of(row)


def test_a_sweep_point_reads_its_costs_through_the_typed_reader():
    from core.tune.sweep_records import MethodCost

    cost = MethodCost(vectors=3, tokens_encoded=None, seconds=0.5)
    assert MethodCost.from_dict(cost.to_dict()) == cost
    with pytest.raises(RecordError, match=r"^sweep\.points\[0\]\.costs\.late\.vectors: "):
        MethodCost.from_dict({"vectors": "3", "seconds": 1}, "sweep.points[0].costs.late")


def test_a_store_record_of_a_newer_schema_is_refused_with_what_to_do():
    from core.errors import StoreError
    from core.store.chroma_records import SCHEMA_VERSION, hit_from_record

    meta = {"schema": SCHEMA_VERSION + 1, "char_start": 0, "char_end": 2}
    with pytest.raises(StoreError, match=r"newer than this Chunkscope's .*: upgrade Chunkscope"):
        hit_from_record("c1", meta, "ab", score=0.5, rank=1)
