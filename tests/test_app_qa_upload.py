"""A QA table uploaded on the Evaluate and Tune pages (``workbench/widgets/query_upload.py``): a
FinanceBench-shaped JSONL (nested evidence) and a CSV over a document kept in the library
are mapped column by column, guesses preselected, and reach the pages' query counts; a
column some row lacks is one error line."""

from __future__ import annotations

import json
from pathlib import Path

from core.formats import load_document
from core.library import Library
from core.store import ChunkStore
from tests.test_app_engine_pages import fake, open_page, plain, store_dir
from workbench.state import EvalKey, QaKey
from workbench.widgets import query_upload as qa

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest
TEXT = (
    "# Acme annual report\n\n"
    "Revenue grew to 4.2 billion dollars in 2022, driven by the industrial segment.\n\n"
    "The board declared a dividend of 1.10 dollars per share for the year.\n\n"
    "Capital expenditure was 310 million dollars, mostly on the new plant in Ohio.\n"
)
ROWS = [
    {"financebench_id": "fb-1", "doc_name": "acme-2022", "question": "What was revenue?",
     "answer": "4.2 billion", "evidence": [
         {"evidence_text": "Revenue grew to 4.2 billion dollars in 2022", "evidence_page_num": 0}]},
    {"financebench_id": "fb-2", "doc_name": "acme-2022", "question": "What dividend was paid?",
     "answer": "1.10", "evidence": [
         {"evidence_text": "a dividend of 1.10 dollars per share", "evidence_page_num": 0},
         {"evidence_text": "for the year", "evidence_page_num": 0}]},
    {"financebench_id": "fb-3", "doc_name": "acme-2022", "question": "How much was capex?",
     "answer": "310 million", "evidence": [
         {"evidence_text": "Capital expenditure was 310 million dollars", "evidence_page_num": 0}]},
]  # fmt: skip
CSV = (
    "question,evidence,doc,page\n"
    'What was revenue?,"Revenue grew to 4.2 billion dollars",acme-2022,1\n'
    "Where is the new plant?,the new plant in Ohio,acme-2022,1\n"
)


def _keep_document(store_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "acme-2022.md"
    path.write_text(TEXT, encoding="utf-8")
    doc = load_document(path)
    Library.of_store(ChunkStore.open(store_dir)).add(
        path.read_bytes(), name=path.name, doc_id=doc.doc_id, sha256=doc.sha256
    )


def _upload(page: str, name: str, data: bytes):
    at = open_page(page)
    at.segmented_control(key=EvalKey.SOURCE).set_value("upload").run()
    at.file_uploader(key=EvalKey.UPLOAD).set_value([(name, data, "text/plain")]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _jsonl(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def test_a_financebench_table_is_mapped_with_its_guesses_on_both_pages(fake, store_dir, tmp_path):
    _keep_document(store_dir, tmp_path)
    at = _upload("evaluate", "financebench.jsonl", _jsonl(ROWS))
    assert not at.error, [e.value for e in at.error]
    picked = {k: at.selectbox(key=k).value for k in (QaKey.QUESTION, QaKey.EVIDENCE,
              QaKey.DOC, QaKey.ID, QaKey.PAGE)}  # fmt: skip
    assert picked == {
        QaKey.QUESTION: "question", QaKey.EVIDENCE: "evidence[].evidence_text",
        QaKey.DOC: "doc_name", QaKey.ID: "financebench_id",
        QaKey.PAGE: "evidence[].evidence_page_num",
    }  # fmt: skip
    assert at.radio(key=QaKey.PAGE_BASE).value == 0  # a page 0 occurs
    captions = " ".join(c.value for c in at.caption)
    assert "Labelled queries: 3 · documents: 1" in captions
    at.selectbox(key=QaKey.PAGE).set_value(qa.NONE).run()  # a Markdown file has no pages
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.subheader[0].value.startswith("3 queries · ")  # every evidence text found
    tune = _upload("tune", "financebench.jsonl", _jsonl(ROWS))
    assert not tune.error, [e.value for e in tune.error]
    assert "3 queries · 1 documents" in " ".join(c.value for c in tune.caption)


def test_a_csv_table_reaches_both_pages_and_a_new_mapping_is_reread(fake, store_dir, tmp_path):
    _keep_document(store_dir, tmp_path)
    at = _upload("evaluate", "qa.csv", CSV.encode())
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key=QaKey.EVIDENCE).value == "evidence"
    assert at.selectbox(key=QaKey.ID).value == qa.NONE
    assert at.radio(key=QaKey.PAGE_BASE).value == 1
    assert "Labelled queries: 2 · documents: 1" in " ".join(c.value for c in at.caption)
    at.selectbox(key=QaKey.DOC).set_value("question").run()  # documents named by the questions
    captions = " ".join(c.value for c in at.caption)
    assert "Labelled queries: 2 · documents: 0" in captions
    assert "Not in the library, so their queries have no document: What was revenue?" in captions
    tune = _upload("tune", "qa.csv", CSV.encode())
    assert "2 queries · 1 documents" in " ".join(c.value for c in tune.caption)


def test_a_column_one_row_lacks_is_one_error_line(fake, store_dir, tmp_path):
    _keep_document(store_dir, tmp_path)
    rows = [ROWS[0], {k: v for k, v in ROWS[1].items() if k != "doc_name"}]
    at = _upload("evaluate", "gappy.jsonl", _jsonl(rows))
    [error] = [plain(e.value) for e in at.error]
    assert error == "gappy.jsonl row 1: no column 'doc_name' (columns: " + ", ".join(
        k for k in ROWS[1] if k != "doc_name"
    ) + ")"  # fmt: skip
    assert "\n" not in error
    assert "Labelled queries: 0 · documents: 0" in " ".join(c.value for c in at.caption)


def test_a_query_set_line_is_not_a_table() -> None:
    line = json.dumps({"id": "q", "query": "x", "doc": "d", "evidence": [{"text": "x"}]})
    assert not qa.is_qa_table("set.jsonl", line.encode())
    assert qa.is_qa_table("fb.jsonl", _jsonl(ROWS))
    assert qa.is_qa_table("any.csv", b"query,doc\n")
    columns, nested = qa.columns_of(ROWS)
    assert nested == ["evidence[].evidence_text", "evidence[].evidence_page_num"]
    assert columns[:3] == ["financebench_id", "doc_name", "question"]


def test_a_column_named_unlike_any_guess_waits_for_a_pick(fake, store_dir, tmp_path):
    _keep_document(store_dir, tmp_path)
    table = CSV.replace("evidence,", "snippet,", 1).encode()
    at = _upload("evaluate", "odd.csv", table)
    assert at.selectbox(key=QaKey.EVIDENCE).value is None  # never the question column
    [error] = [plain(e.value) for e in at.error]
    assert error.startswith("odd.csv is read as a QA table, and no column is named like its ")
    assert "evidence" in error and ".jsonl" in error and "\n" not in error
    at.selectbox(key=QaKey.EVIDENCE).set_value("snippet").run()
    assert not at.error, [e.value for e in at.error]
    assert "Labelled queries: 2 · documents: 1" in " ".join(c.value for c in at.caption)
