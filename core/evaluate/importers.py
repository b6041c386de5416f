"""Importers from other labelled sets into the query-set format.

- ``import_chunking_eval(DIR)``: the chunking_evaluation layout (``questions_df.csv`` with
  ``question``, ``references`` (a JSON list of ``{content, start_index, end_index}``) and
  ``corpus_id``; texts in ``corpora/<corpus_id>.md``). Each reference becomes a gold span
  on document ``corpus_id``, checked against the text of the *loaded* document: every
  span's content must equal its slice, or the import fails and names the spans that differ.
  Query ids are ``<corpus_id>-<row>`` with ``row`` the 0-based CSV row.
- ``import_qa(FILE)``: any CSV or JSONL with a question, an evidence text, a page and a
  document column. Rows with the same document and question become one query with several
  evidence texts; ids come from ``id_column`` or are ``qa-<first row>``. Evidence is left
  to resolve against the loaded documents (``resolve_queries``). Nested evidence, as real
  QA sets carry it, is named by a path: ``evidence[].evidence_text`` takes the field
  ``evidence_text`` of every item of the row's list ``evidence`` (FinanceBench), paired
  item by item with ``evidence[].evidence_page_num``; ``page_base`` is the number of the
  first page in the file (0 for FinanceBench, 1 by default).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from core.errors import LabelError
from core.evaluate.labels import Evidence, GoldSpan, LabelledQuery
from core.formats import load_document
from core.provenance.types import Document

Loader = Callable[[Path], Document]
_MAX_SHOWN = 5


def _default_loader(path: Path) -> Document:
    return load_document(path)


def _read_csv(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 28)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.DictReader(handle))
    except UnicodeDecodeError as exc:
        raise LabelError(f"{path} is not UTF-8 ({exc.reason}): save it as UTF-8") from exc


def _references(row: Mapping[str, str], number: int) -> list[dict[str, object]]:
    try:
        refs = json.loads(row["references"])
    except (KeyError, ValueError) as exc:
        raise LabelError(f"questions_df.csv row {number}: unreadable references ({exc})") from exc
    if not isinstance(refs, list) or not refs:
        raise LabelError(f"questions_df.csv row {number}: references must be a non-empty list")
    return refs


def _reference_span(ref: object, number: int) -> tuple[int, int]:
    """``(start_index, end_index)`` of one reference: integers with 0 <= start < end."""
    start, end = (ref.get("start_index"), ref.get("end_index")) if isinstance(ref, dict) else (0, 0)
    if not isinstance(ref, dict) or not (_is_int(start) and _is_int(end)):
        raise LabelError(
            f"questions_df.csv row {number}: each reference needs integer start_index and "
            f"end_index, got {str(ref)[:80]}"
        )
    if not 0 <= start < end:
        raise LabelError(
            f"questions_df.csv row {number}: reference span [{start}, {end}) is empty or negative"
        )
    return start, end


@dataclass(slots=True)
class _Grouped:
    """The rows of one (document, question): the first row's number and id, all evidence."""

    row: int
    id: object
    evidence: list[Evidence] = field(default_factory=list)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def import_chunking_eval(
    folder: str | os.PathLike[str], *, loader: Loader | None = None
) -> list[LabelledQuery]:
    """Queries with gold spans from a chunking_evaluation folder, all spans verified."""
    root = Path(folder)
    table = root / "questions_df.csv"
    if not table.is_file():
        raise LabelError(f"{root} has no questions_df.csv: pass the chunking_evaluation folder")
    load = loader or _default_loader
    docs: dict[str, Document] = {}
    queries: list[LabelledQuery] = []
    mismatches: list[str] = []
    for number, row in enumerate(_read_csv(table)):
        corpus_id = (row.get("corpus_id") or "").strip()
        if not corpus_id or not (row.get("question") or "").strip():
            raise LabelError(f"questions_df.csv row {number}: needs question and corpus_id")
        if corpus_id not in docs:
            source = root / "corpora" / f"{corpus_id}.md"
            if not source.is_file():
                raise LabelError(f"{source} is missing: the folder needs corpora/{corpus_id}.md")
            docs[corpus_id] = load(source)
        doc = docs[corpus_id]
        gold = []
        for ref in _references(row, number):
            start, end = _reference_span(ref, number)
            if doc.text[start:end] != ref.get("content"):
                mismatches.append(f"row {number} [{start}, {end})")
                continue
            gold.append(GoldSpan(char_start=start, char_end=end, text=doc.text[start:end]))
        if gold:
            queries.append(
                LabelledQuery(
                    id=f"{corpus_id}-{number}",
                    query=row["question"].strip(),
                    doc=corpus_id,
                    gold=tuple(gold),
                    doc_sha256=doc.sha256,
                )
            )
    if mismatches:
        shown = ", ".join(mismatches[:_MAX_SHOWN])
        raise LabelError(
            f"{len(mismatches)} reference spans differ from the loaded text ({shown}"
            f"{', ...' if len(mismatches) > _MAX_SHOWN else ''}): the corpora changed"
        )
    return queries


def _rows(path: Path) -> Iterator[Mapping[str, object]]:
    if path.suffix.lower() == ".csv":
        yield from _read_csv(path)
        return
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise LabelError(f"{path.name}: give a .csv or .jsonl file")
    try:
        with path.open(encoding="utf-8") as handle:
            lines = list(handle)
    except UnicodeDecodeError as exc:
        raise LabelError(f"{path} is not UTF-8 ({exc.reason}): save it as UTF-8") from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise LabelError(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(data, dict):
                raise LabelError(f"{path}:{number}: a line must be a JSON object")
            yield data


def _page_of(value: object, where: str, base: int = 1) -> int | None:
    """A 1-based page from ``value`` counted from ``base`` (None when empty)."""
    if value is None or str(value).strip() == "":
        return None
    try:
        page = int(float(str(value))) - base + 1
    except (ValueError, OverflowError) as exc:
        raise LabelError(f"{where}: page {value!r} is not a number") from exc
    if page < 1:
        raise LabelError(
            f"{where}: page {value!r} is before the first page ({base}): check --page-base"
        )
    return page


def _values(row: Mapping[str, object], column: str, where: str) -> list[object]:
    """The values a column path names: ``col`` -> ``[row[col]]``; ``list[].field`` ->
    ``field`` of every item of the list ``row[list]``."""
    if "[]." not in column:
        if column not in row:
            raise LabelError(f"{where}: no column {column!r} (columns: {', '.join(row)})")
        return [row[column]]
    key, field_name = column.split("[].", 1)
    items = row.get(key)
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise LabelError(f"{where}: {key!r} is not a list of objects, as {column!r} needs")
    missing = [n for n, item in enumerate(items) if field_name not in item]
    if missing:
        raise LabelError(f"{where}: item {missing[0]} of {key!r} has no {field_name!r}")
    return [item[field_name] for item in items]


def _evidence_of(
    row: Mapping[str, object], evidence: str, page: str | None, base: int, where: str
) -> list[Evidence]:
    texts = [str(t or "").strip() for t in _values(row, evidence, where)]
    if not texts or not all(texts):
        raise LabelError(f"{where}: empty question or evidence: fill it or drop the row")
    pages = _values(row, page, where) if page else [None] * len(texts)
    if len(pages) == 1 and len(texts) > 1:
        pages = pages * len(texts)
    if len(pages) != len(texts):
        raise LabelError(f"{where}: {len(texts)} evidence texts but {len(pages)} pages")
    return [
        Evidence(text=t, page=_page_of(p, where, base)) for t, p in zip(texts, pages, strict=True)
    ]


def import_qa(
    path: str | os.PathLike[str],
    *,
    question: str,
    evidence: str,
    page: str | None,
    doc: str,
    id_column: str | None = None,
    page_base: int = 1,
) -> list[LabelledQuery]:
    """Queries with evidence from a QA table; see the module docstring."""
    file = Path(path)
    if not file.is_file():
        raise LabelError(f"{file} not found: pass a CSV or JSONL file")
    grouped: dict[tuple[str, str], _Grouped] = {}
    for number, row in enumerate(_rows(file)):
        where = f"{file.name} row {number}"
        missing = [c for c in (question, doc) if c not in row]
        if missing:
            raise LabelError(f"{where}: no column {missing[0]!r} (columns: {', '.join(row)})")
        asked = str(row[question] or "").strip()
        if not asked:
            raise LabelError(f"{where}: empty question or evidence: fill it or drop the row")
        found = _evidence_of(row, evidence, page, page_base, where)
        key = (str(row[doc]), asked)
        first = _Grouped(row=number, id=row.get(id_column) if id_column else None)
        entry = grouped.setdefault(key, first)
        entry.evidence.extend(found)
    queries = [
        LabelledQuery(
            id=str(entry.id or f"qa-{entry.row}"),
            query=asked,
            doc=doc_name,
            evidence=tuple(entry.evidence),
        )
        for (doc_name, asked), entry in grouped.items()
    ]
    ids = [q.id for q in queries]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise LabelError(f"{file.name}: query ids repeat ({', '.join(repeated[:_MAX_SHOWN])})")
    return queries
