"""Importers: the shared chunking_evaluation set (every span verified) and QA tables."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from core.errors import LabelError
from core.evaluate.importers import import_chunking_eval, import_qa
from core.evaluate.labels import read_queries, write_queries
from core.evaluate.resolve import resolve_queries
from core.formats import load_document
from tests.conftest import EVAL_DIR, corpus_files, need_corpus, text_corpora


def test_the_shared_set_imports_with_all_790_spans_verified(tmp_path: Path) -> None:
    queries = import_chunking_eval(EVAL_DIR)
    assert len(queries) == 472
    assert sum(len(q.gold) for q in queries) == 790
    docs = {p.stem: load_document(p) for p in text_corpora()}
    assert {q.doc for q in queries} == set(docs)
    for query in queries:
        doc = docs[query.doc]
        assert query.doc_sha256 == doc.sha256
        for gold in query.gold:
            assert doc.text[gold.char_start : gold.char_end] == gold.text
    path = tmp_path / "shared.jsonl"
    write_queries(path, queries)
    again = read_queries(path)
    assert again == queries
    resolved, unresolved = resolve_queries(again, list(docs.values()))
    assert len(resolved) == 472 and unresolved == []


def test_a_changed_corpus_fails_the_import_and_names_the_spans(tmp_path: Path) -> None:
    folder = tmp_path / "ce"
    (folder / "corpora").mkdir(parents=True)
    with (EVAL_DIR / "questions_df.csv").open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["corpus_id"] == "chatlogs"]
    with (folder / "questions_df.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    shutil.copy(EVAL_DIR / "corpora" / "chatlogs.md", folder / "corpora" / "chatlogs.md")
    assert len(import_chunking_eval(folder)) == len(rows)
    original = (folder / "corpora" / "chatlogs.md").read_text("utf-8")
    (folder / "corpora" / "chatlogs.md").write_text("shifted " + original, "utf-8")
    with pytest.raises(LabelError, match=r"reference spans differ .*row 0"):
        import_chunking_eval(folder)


def test_missing_pieces_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="questions_df.csv"):
        import_chunking_eval(tmp_path)
    (tmp_path / "questions_df.csv").write_text(
        'question,references,corpus_id\nq,"[{""content"": ""x"", ""start_index"": 0, '
        '""end_index"": 1}]",nowhere\n',
        "utf-8",
    )
    with pytest.raises(LabelError, match="corpora/nowhere.md"):
        import_chunking_eval(tmp_path)


@pytest.mark.parametrize(
    ("refs", "message"),
    [
        ([{"content": "Hello"}], "needs integer start_index and end_index"),
        ([1, 2], "needs integer start_index and end_index"),
        ([{"content": "Hello", "start_index": "8.0", "end_index": 13}], "needs integer"),
        ([{"content": "Hello", "start_index": True, "end_index": 13}], "needs integer"),
        ([{"content": "", "start_index": 8, "end_index": 8}], r"\[8, 8\) is empty"),
        ([{"content": "here.\n", "start_index": -6, "end_index": 25}], "or negative"),
    ],
)
def test_malformed_references_are_one_line_label_errors(tmp_path: Path, refs, message) -> None:
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "c.md").write_text("# Doc\n\nHello world here.\n", "utf-8")
    with (tmp_path / "questions_df.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerows([["question", "references", "corpus_id"], ["q?", json.dumps(refs), "c"]])
    with pytest.raises(LabelError, match=message) as info:
        import_chunking_eval(tmp_path)
    assert "\n" not in str(info.value) and "row 0" in str(info.value)


def test_qa_csv_groups_rows_of_one_question(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "answer_text", "page_no", "file"])
        writer.writerow(["What is A?", "A is the first letter.", "2", "doc.pdf"])
        writer.writerow(["What is A?", "It opens the alphabet.", "3", "doc.pdf"])
        writer.writerow(["What is B?", "B follows A.", "", "doc.pdf"])
    queries = import_qa(
        path, question="question", evidence="answer_text", page="page_no", doc="file"
    )
    assert [q.id for q in queries] == ["qa-0", "qa-2"]
    assert [(e.text, e.page) for e in queries[0].evidence] == [
        ("A is the first letter.", 2),
        ("It opens the alphabet.", 3),
    ]
    assert queries[1].evidence[0].page is None and queries[1].doc == "doc.pdf"


def test_qa_jsonl_with_an_id_column(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    rows = [
        {"qid": "x1", "q": "Where?", "ev": "Here.", "p": 1, "d": "a"},
        {"qid": "x2", "q": "When?", "ev": "Now.", "p": 1.0, "d": "a"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), "utf-8")
    queries = import_qa(path, question="q", evidence="ev", page="p", doc="d", id_column="qid")
    assert [(q.id, q.evidence[0].page) for q in queries] == [("x1", 1), ("x2", 1)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q,ev,d\nWhere?,,a\n", "empty question or evidence"),
        ("q,ev,d,p\nWhere?,Here.,a,zero\n", "not a number"),
        ("q,evidence,d\nWhere?,Here.,a\n", "no column 'ev'"),
    ],
)
def test_bad_qa_tables_are_user_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, "utf-8")
    with pytest.raises(LabelError, match=message):
        import_qa(path, question="q", evidence="ev", page="p", doc="d")


@pytest.mark.parametrize(
    ("name", "content", "extra", "message"),
    [
        ("t.csv", b"q,ev,d,p\nWhere?,Here.,a,1\n", ["--threshold", "1.5"], "share in (0, 1]"),
        ("t.csv", b"q,ev,d,p\nWhere?,Here.,a,inf\n", [], "page 'inf' is not a number"),
        ("t.csv", b"q,ev,d,p\nWhere?,H\xe9re.,a,1\n", [], "is not UTF-8"),
        ("t.jsonl", b'{"q": "Where?", "ev": "H\xe9re.", "d": "a"}\n', [], "is not UTF-8"),
    ],
)
def test_import_qa_user_errors_exit_2(
    tmp_path: Path, capsys, name: str, content: bytes, extra: list[str], message: str
) -> None:
    from core.cli import main

    path = tmp_path / name
    path.write_bytes(content)
    args = ["import-qa", str(path), "--question", "q", "--evidence", "ev", "--doc", "d"]
    args += ["--page", "p", "--out", str(tmp_path / "out.jsonl"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


FINANCEBENCH = Path(EVAL_DIR).parent / "financebench"


def test_nested_financebench_evidence_imports_with_0_based_pages_and_resolves() -> None:
    queries = import_qa(
        need_corpus(FINANCEBENCH / "questions.jsonl"),
        question="question",
        evidence="evidence[].evidence_text",
        page="evidence[].evidence_page_num",
        doc="doc_name",
        id_column="financebench_id",
        page_base=0,
    )
    raw = [json.loads(line) for line in (FINANCEBENCH / "questions.jsonl").open()]
    assert len(queries) == len(raw) == 10
    for query, row in zip(queries, raw, strict=True):
        assert [e.page for e in query.evidence] == [
            e["evidence_page_num"] + 1 for e in row["evidence"]
        ]
    docs = [load_document(p) for p in corpus_files(FINANCEBENCH / "pdfs", "*.pdf")]
    resolved, unresolved = resolve_queries(queries, docs)
    assert not unresolved and len(resolved) == 10
    for item in resolved:  # every span starts on the labelled page
        doc = next(d for d in docs if d.doc_id == item.doc_id)
        for gold in item.gold:
            assert doc.text[gold.char_start : gold.char_end].strip()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"q": "a?", "d": "x", "ev": "notalist"}, "'ev' is not a list of objects"),
        ({"q": "a?", "d": "x", "ev": [{"t": "b"}]}, "item 0 of 'ev' has no 'p'"),
        ({"q": "a?", "d": "x", "ev": [{"t": "b", "p": -1}]}, "before the first page"),
        ({"q": "a?", "d": "x", "ev": []}, "empty question or evidence"),
    ],
)
def test_bad_nested_evidence_is_a_one_line_label_error(tmp_path: Path, row, message) -> None:
    file = tmp_path / "qa.jsonl"
    file.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(LabelError, match=message):
        import_qa(file, question="q", evidence="ev[].t", page="ev[].p", doc="d", page_base=0)
