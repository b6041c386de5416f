"""Labelled query sets: one query a line of JSONL.

A line is ``{"id", "query", "doc", "gold": [{"char_start", "char_end"}]}`` or, instead of
``gold``, ``"evidence": [{"text", "page"}]``. ``doc`` names a document by ``doc_id`` or by
source file name, with or without extension. Gold spans are half-open character offsets
into that document's canonical text; a gold span may carry its ``text``, and the line a
``doc_sha256``, both then checked when the span is used (a changed document never silently
moves a label). When a line has both, the gold spans are used and the evidence is only a
record (that is how resolved evidence is written back). Evidence pages are 1-based;
``page`` may be ``null`` for reflowable text or when the page is unknown. Any other keys
of a line (a triage ``tag``, a ``note``) are kept in ``LabelledQuery.meta`` and written
back unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import LabelError

_KNOWN_KEYS = frozenset({"id", "query", "doc", "doc_sha256", "gold", "evidence"})


@dataclass(frozen=True, slots=True, kw_only=True)
class GoldSpan:
    """A gold span ``[char_start, char_end)`` of the canonical text, never empty.

    ``method`` says where it came from: ``given`` (written in the query set), ``exact``
    (evidence matched ignoring whitespace) or ``aligned`` (word alignment); ``coverage``
    is the share of the evidence's words inside the span (1.0 for ``given``/``exact``).
    ``text``, when known, is the quoted slice and is checked against the document.
    """

    char_start: int
    char_end: int
    text: str | None = None
    method: str = "given"
    coverage: float = 1.0
    page: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.char_start < self.char_end:
            raise ValueError(f"gold span [{self.char_start}, {self.char_end}) is empty or bad")
        if self.text is not None and len(self.text) != self.char_end - self.char_start:
            raise ValueError("gold text length differs from its span")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"char_start": self.char_start, "char_end": self.char_end}
        if self.text is not None:
            out["text"] = self.text
        if self.method != "given":
            out["method"] = self.method
            out["coverage"] = round(self.coverage, 4)
        if self.page is not None:
            out["page"] = self.page
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """Evidence text as another tool copied it, on a 1-based page (``None``: anywhere)."""

    text: str
    page: int | None = None

    def __post_init__(self) -> None:
        if self.page is not None and self.page < 1:
            raise ValueError(f"evidence pages are 1-based, got {self.page}")

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "page": self.page}


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelledQuery:
    """One labelled query: gold spans, or evidence still to resolve (never both empty)."""

    id: str
    query: str
    doc: str
    gold: tuple[GoldSpan, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    doc_sha256: str | None = None
    meta: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a query needs an id")
        if not self.gold and not self.evidence:
            raise ValueError(f"query {self.id}: give gold spans or evidence")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "query": self.query, "doc": self.doc}
        if self.doc_sha256:
            out["doc_sha256"] = self.doc_sha256
        if self.gold:
            out["gold"] = [g.to_dict() for g in self.gold]
        if self.evidence:
            out["evidence"] = [e.to_dict() for e in self.evidence]
        out.update(self.meta)
        return out


def _as_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _gold_of(item: object) -> GoldSpan:
    if not isinstance(item, Mapping):
        raise ValueError("each gold entry is an object with char_start and char_end")
    page = item.get("page")
    return GoldSpan(
        char_start=_as_int(item.get("char_start"), "char_start"),
        char_end=_as_int(item.get("char_end"), "char_end"),
        text=None if item.get("text") is None else str(item["text"]),
        method=str(item.get("method", "given")),
        coverage=float(item.get("coverage", 1.0)),
        page=None if page in (None, "") else _as_int(page, "page"),
    )


def _evidence_of(item: object) -> Evidence:
    if isinstance(item, str):
        return Evidence(text=item)
    if not isinstance(item, Mapping) or not str(item.get("text", "")).strip():
        raise ValueError("each evidence entry is an object with a non-empty text")
    page = item.get("page")
    return Evidence(
        text=str(item["text"]), page=None if page in (None, "") else _as_int(page, "page")
    )


def query_from_dict(data: Mapping[str, object]) -> LabelledQuery:
    """Build a query from one parsed line; raises ``ValueError`` on a malformed line."""
    for key in ("id", "query", "doc"):
        if key not in data or data[key] in (None, ""):
            raise ValueError(f"missing {key!r}")
    gold = data.get("gold") or []
    evidence = data.get("evidence") or []
    if not isinstance(gold, list) or not isinstance(evidence, list):
        raise ValueError("'gold' and 'evidence' must be lists")
    sha = data.get("doc_sha256")
    return LabelledQuery(
        id=str(data["id"]),
        query=str(data["query"]),
        doc=str(data["doc"]),
        gold=tuple(_gold_of(g) for g in gold),
        evidence=tuple(_evidence_of(e) for e in evidence),
        doc_sha256=str(sha) if sha else None,
        meta={k: v for k, v in data.items() if k not in _KNOWN_KEYS},
    )


def parse_queries(lines: Iterable[str], *, source: str = "<queries>") -> list[LabelledQuery]:
    """Parse JSONL lines (blank lines skipped); ids must be unique."""
    queries: list[LabelledQuery] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("a line must be a JSON object")
            query = query_from_dict(data)
        except (ValueError, TypeError) as exc:
            raise LabelError(f"{source}:{number}: {exc}: fix the line or drop it") from exc
        if query.id in seen:
            raise LabelError(
                f"{source}:{number}: duplicate query id {query.id!r}: ids must be unique"
            )
        seen.add(query.id)
        queries.append(query)
    return queries


def read_queries(path: str | os.PathLike[str]) -> list[LabelledQuery]:
    """Read a JSONL query set; a missing or empty file is a ``LabelError``."""
    file = Path(path)
    if not file.is_file():
        raise LabelError(f"query set {file} not found: pass an existing JSONL file")
    try:
        with file.open(encoding="utf-8") as handle:
            queries = parse_queries(handle, source=str(file))
    except UnicodeDecodeError as exc:
        raise LabelError(
            f"{file} is not UTF-8 ({exc.reason}): save the query set as UTF-8"
        ) from exc
    if not queries:
        raise LabelError(f"query set {file} holds no queries: one JSON object a line")
    return queries


def write_queries(path: str | os.PathLike[str], queries: Iterable[LabelledQuery]) -> int:
    """Write queries as JSONL (UTF-8, one object a line); returns how many were written."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with file.open("w", encoding="utf-8") as handle:
        for query in queries:
            handle.write(json.dumps(query.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count
