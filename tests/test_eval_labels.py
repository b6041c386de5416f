"""Query-set JSONL: parsing, errors with line numbers, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import LabelError
from core.evaluate.labels import (
    Evidence,
    GoldSpan,
    LabelledQuery,
    parse_queries,
    read_queries,
    write_queries,
)


def test_both_shapes_parse_and_extra_keys_are_kept(tmp_path: Path) -> None:
    lines = [
        {"id": "1", "query": "q one", "doc": "a.pdf", "gold": [{"char_start": 3, "char_end": 9}]},
        {
            "id": "2",
            "query": "q two",
            "doc": "a",
            "evidence": [{"text": "hello", "page": 2}],
            "tag": "boundary",
            "note": "split",
        },
        {"id": "3", "query": "q three", "doc": "b", "evidence": [{"text": "x", "page": None}]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", "utf-8")
    queries = read_queries(path)
    assert [q.id for q in queries] == ["1", "2", "3"]
    assert queries[0].gold == (GoldSpan(char_start=3, char_end=9),)
    assert queries[1].evidence == (Evidence(text="hello", page=2),)
    assert queries[1].meta == {"tag": "boundary", "note": "split"}
    assert queries[2].evidence[0].page is None
    copy = tmp_path / "copy.jsonl"
    assert write_queries(copy, queries) == 3
    assert read_queries(copy) == queries
    assert [json.loads(x) for x in copy.read_text("utf-8").splitlines()][1] == lines[1]


def test_resolved_gold_keeps_method_coverage_text_and_sha(tmp_path: Path) -> None:
    query = LabelledQuery(
        id="r",
        query="q",
        doc="a",
        doc_sha256="ab" * 32,
        gold=(
            GoldSpan(char_start=0, char_end=3, text="abc", method="aligned", coverage=0.96, page=4),
        ),
        evidence=(Evidence(text="a b c", page=4),),
    )
    path = tmp_path / "r.jsonl"
    write_queries(path, [query])
    assert read_queries(path) == [query]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "1", "query": "q"}', "missing 'doc'"),
        ('{"id": "1", "query": "q", "doc": "a"}', "gold spans or evidence"),
        (
            '{"id": "1", "query": "q", "doc": "a", "gold": [{"char_start": 5, "char_end": 5}]}',
            "empty",
        ),
        (
            '{"id": "1", "query": "q", "doc": "a", "evidence": [{"text": "x", "page": 0}]}',
            "1-based",
        ),
        ('{"id": "1", "query": "q", "doc": "a", "gold": {"char_start": 1}}', "lists"),
        ("[1, 2]", "JSON object"),
        ("{not json", "line"),
    ],
)
def test_malformed_lines_name_their_line(line: str, message: str) -> None:
    good = '{"id": "0", "query": "q", "doc": "a", "gold": [{"char_start": 0, "char_end": 1}]}'
    with pytest.raises(LabelError, match=":2:") as info:
        parse_queries([good, line], source="set.jsonl")
    assert message in str(info.value)


def test_duplicate_ids_and_missing_or_empty_files(tmp_path: Path) -> None:
    line = '{"id": "1", "query": "q", "doc": "a", "gold": [{"char_start": 0, "char_end": 1}]}'
    with pytest.raises(LabelError, match="duplicate"):
        parse_queries([line, line])
    with pytest.raises(LabelError, match="not found"):
        read_queries(tmp_path / "none.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", "utf-8")
    with pytest.raises(LabelError, match="no queries"):
        read_queries(empty)


def test_a_query_set_that_is_not_utf8_is_a_user_error(tmp_path: Path, capsys) -> None:
    from core.cli import main

    path = tmp_path / "latin1.jsonl"
    line = '{"id": "1", "query": "caf\u00e9?", "doc": "a", "evidence": [{"text": "x"}]}\n'
    path.write_bytes(line.encode("latin-1"))
    with pytest.raises(LabelError, match="is not UTF-8"):
        read_queries(path)
    assert main(["eval", "--queries", str(path), "--docs", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is not UTF-8" in err
