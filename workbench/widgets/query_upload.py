"""An uploaded QA table as a query set: the workbench's ``chunkscope import-qa``.

A ``.csv``, or a ``.jsonl`` whose rows carry no ``query`` field (so not a query set), is a
QA table: the user maps its columns (question, evidence, document, optional id and page,
the page base) in selectboxes preselected from common names, and ``core.evaluate.import_qa``
builds the queries from the uploaded bytes through a temporary file. Evidence may be a
column or a nested path ``LIST[].FIELD`` offered for a column that holds a list of objects
(FinanceBench's ``evidence[].evidence_text``). Errors are one-line ``LabelError``s.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core.errors import LabelError
from core.evaluate import LabelledQuery, import_qa
from workbench.state import QaKey

NONE = "(none)"
_GUESSES = {
    "question": ("question", "query", "questions", "prompt"),
    "evidence": ("evidence_text", "evidence", "text", "context", "passage"),
    "doc": ("doc_name", "doc", "document", "doc_id", "document_name", "source"),
    "page": ("evidence_page_num", "page", "page_num", "page_number"),
    "id": ("id", "qid", "question_id", "financebench_id"),
}
_ZERO_BASED = {"evidence_page_num"}  # FinanceBench counts its pages from 0


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelError(f"{name} is not UTF-8 text ({exc.reason}): save it as UTF-8") from exc


def _json_rows(name: str, text: str) -> list[dict[str, object]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise LabelError(f"{name}:{number}: not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise LabelError(f"{name}:{number}: a line must be a JSON object")
        rows.append(data)
    return rows


def is_qa_table(name: str, data: bytes) -> bool:
    """A ``.csv``, or a ``.jsonl`` whose first row has no ``query`` field (every query-set
    line needs one, see ``core.evaluate.parse_queries``)."""
    if name.lower().endswith(".csv"):
        return True
    first = next((line for line in data.splitlines() if line.strip()), b"")
    try:
        row = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return False  # parse_queries says what is wrong with the line
    return isinstance(row, dict) and "query" not in row


def table_rows(name: str, data: bytes) -> list[Mapping[str, object]]:
    """The rows of a QA table: CSV rows as strings, JSONL rows as parsed."""
    text = _text(name, data)
    if name.lower().endswith(".csv"):
        csv.field_size_limit(1 << 28)
        try:
            return list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise LabelError(f"{name}: not a readable CSV ({exc})") from exc
    return list(_json_rows(name, text))


def columns_of(rows: Sequence[Mapping[str, object]]) -> tuple[list[str], list[str]]:
    """``(columns, nested)``: every column in order of first sight, and ``LIST[].FIELD`` for
    every field of a column that holds a non-empty list of objects."""
    columns: dict[str, None] = {}
    nested: dict[str, None] = {}
    for row in rows:
        for key, value in row.items():
            columns.setdefault(str(key))
            if isinstance(value, list) and value and all(isinstance(i, Mapping) for i in value):
                for item in value:
                    for field in item:
                        nested.setdefault(f"{key}[].{field}")
    return list(columns), list(nested)


def guess(options: Sequence[str], role: str, prefer: str = "") -> str | None:
    """The option named like ``role``'s common names (a field's name counts for a nested
    path; paths under ``prefer``'s list first), else None."""

    def leaf(option: str) -> str:
        return option.split("[].", 1)[-1].lower()

    ranked = sorted(options, key=lambda o: not (prefer and o.startswith(prefer)))
    for name in _GUESSES[role]:
        for option in ranked:
            if leaf(option) == name:
                return option
    return None


def _page_base(rows: Sequence[Mapping[str, object]], page: str) -> int:
    """0 when a page value 0 occurs or the column is known to count from 0, else 1."""
    if page == NONE:
        return 1
    key, _, field = page.partition("[].")
    for row in rows:
        value = row.get(key)
        items = value if field and isinstance(value, list) else []
        values = [i.get(field) for i in items if isinstance(i, Mapping)] if field else [value]
        if any(str(v).strip() in ("0", "0.0") for v in values if v is not None):
            return 0
    return 0 if (field or key) in _ZERO_BASED else 1


def _pick(
    cell: DeltaGenerator,
    label: str,
    options: list[str],
    key: str,
    preset: str | None,
    help: str | None = None,
) -> str | None:
    """A selectbox preset to ``preset``: optional roles (``NONE`` first) fall back to
    ``NONE``, required ones to no pick at all (never a wrong column picked silently)."""
    if st.session_state.get(key, "") not in [*options, None]:  # unset, or a stale column
        st.session_state[key] = preset if preset in options else None
        if options[0] == NONE and st.session_state[key] is None:
            st.session_state[key] = NONE
    picked = cell.selectbox(
        label, options, index=None, key=key, help=help, placeholder="Pick a column"
    )
    return None if picked is None else str(picked)


def _forget_on_new_file(name: str, data: bytes) -> None:
    """Drop the mapping of another file, so a new one starts from its own guesses."""
    seen = (name, len(data), hashlib.sha256(data).hexdigest())
    if st.session_state.get(QaKey.FILE) != seen:
        for key in vars(QaKey).values():
            if isinstance(key, str) and key.startswith(QaKey.PREFIX):
                st.session_state.pop(key, None)
        st.session_state[QaKey.FILE] = seen


def qa_queries(upload: UploadedFile) -> list[LabelledQuery]:
    """Map the uploaded QA table's columns and import it (``LabelError``: one line)."""
    data = upload.getvalue()
    name = Path(upload.name).name
    _forget_on_new_file(name, data)
    rows = table_rows(name, data)
    if not rows:
        raise LabelError(f"{name} holds no rows: one question a row")
    columns, nested = columns_of(rows)
    st.caption(
        f"{name} is a QA table ({len(rows)} rows), not a query set: map its columns "
        "(as `chunkscope import-qa` does); its evidence is found in the documents it names."
    )
    top, low = st.columns(3), st.columns(3)
    question = _pick(top[0], "Question", columns, QaKey.QUESTION, guess(columns, "question"))
    evidence_at = guess(nested, "evidence") or guess(columns, "evidence")
    evidence = _pick(
        top[1], "Evidence", [*nested, *columns], QaKey.EVIDENCE, evidence_at,
        help="A column of evidence text, or LIST[].FIELD: that field of every object in a "
        "column holding a list of objects",
    )  # fmt: skip
    doc = _pick(top[2], "Document", columns, QaKey.DOC, guess(columns, "doc"))
    ids = [NONE, *columns]
    id_column = _pick(low[0], "Id (optional)", ids, QaKey.ID, guess(columns, "id")) or NONE
    within = evidence.split("[].")[0] + "[]." if evidence and "[]." in evidence else ""
    page_at = guess(nested, "page", within) or guess(columns, "page")
    pages = [NONE, *nested, *columns]
    page = _pick(low[1], "Page (optional)", pages, QaKey.PAGE, page_at) or NONE
    if st.session_state.get(QaKey.PAGE_BASE) not in (0, 1):
        st.session_state[QaKey.PAGE_BASE] = _page_base(rows, page)
    base = low[2].radio(
        "First page is", (0, 1), key=QaKey.PAGE_BASE, horizontal=True,
        disabled=page == NONE, help="The number the file gives the first page",
    )  # fmt: skip
    unmapped = [r for r, c in (("question", question), ("evidence", evidence), ("document", doc))
                if c is None]  # fmt: skip
    if question is None or evidence is None or doc is None:
        raise LabelError(
            f"{name} is read as a QA table, and no column is named like its "
            f"{' or '.join(unmapped)}: pick the {' and '.join(unmapped)} column above, or "
            "upload a query set (.jsonl, one JSON object a line with id, query, doc and "
            "gold or evidence)"
        )
    with tempfile.TemporaryDirectory(prefix="chunkscope-qa-") as folder:
        path = Path(folder) / name
        path.write_text(_text(name, data), encoding="utf-8")  # no BOM left
        return import_qa(
            path, question=question, evidence=evidence, doc=doc,
            page=None if page == NONE else page, page_base=int(base),
            id_column=None if id_column == NONE else id_column,
        )  # fmt: skip
