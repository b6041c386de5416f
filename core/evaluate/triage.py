"""Failure triage: a reproducible sample of failed queries, cause tags kept in SQLite.

A *failure* under a method is a query with no gold-overlapping chunk in the run's top
``text_k`` (``QueryRecord.failed``). ``sample_failures`` draws up to ``n`` of them with
``numpy.random.default_rng(seed)`` from the failures sorted by query id, so the same run,
method, ``n`` and seed always give the same sample in the same order.

Tags live in a SQLite file beside the index (default ``<store dir>/triage.sqlite``, the
store dir being ``$CHUNKSCOPE_STORE`` or ``./.chunkscope``), one row per (run id, query
id, document sha256, method): a query that fails under two methods gets a tag under each
(each method's failure may have its own cause); tagging again under the same method
replaces the cause (and the note, when one is given).
Exports: JSONL lines that are query-set lines again (id, query, doc, doc_sha256, gold with
text, plus ``tag``, ``note``, ``method``, ``run_id``), usable as the regression set of the
next run; and CSV for spreadsheets.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from core.config import store_folder
from core.errors import LabelError
from core.evaluate.labels import GoldSpan, LabelledQuery, write_queries
from core.evaluate.run_file import EvalRun, QueryRecord, RankedHit, Suggestion
from core.methods import PAIRED
from core.provenance.cite import Citation
from core.provenance.serial import Fields

CAUSES: tuple[str, ...] = (
    "parse", "boundary", "context", "vocabulary", "label", "method", "other"
)  # fmt: skip
CAUSE_HELP = {
    "parse": "bad extraction: the text of the evidence is wrong or missing",
    "boundary": "the evidence is split across chunks",
    "context": "the chunk lacks its subject (what it talks about is elsewhere)",
    "vocabulary": "the model misses the domain's words",
    "label": "bad or unanswerable label, or the answer stands in a second place too",
    "method": "one method misses what the others find (its vectors moved the wrong way)",
    "other": "anything else (say what in the note)",
}
TRIAGE_FILENAME = "triage.sqlite"
# 2: a tag keeps the cause the diagnosis suggested (``suggested``, '' when none was shown);
# a version-1 file gains the column on open. 3: the cause "method" (a method-specific
# miss); an older file's table is rebuilt with the wider check on open, its rows kept.
# 4: one tag per failure and method (the method joins the key); an older file's table is
# rebuilt on open, its rows kept. A newer file than this code is refused.
_SCHEMA_VERSION = 4
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tags (
    run_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_sha256 TEXT NOT NULL,
    cause TEXT NOT NULL CHECK (cause IN ({", ".join(repr(c) for c in CAUSES)})),
    note TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL DEFAULT '',
    tagged_at TEXT NOT NULL,
    suggested TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, query_id, doc_sha256, method)
)
"""
_COLUMN_NAMES = (
    "run_id",
    "query_id",
    "doc_sha256",
    "cause",
    "note",
    "method",
    "tagged_at",
    "suggested",
)  # the fields of Tag, in the table's order
_COLUMNS = ", ".join(_COLUMN_NAMES)


def default_triage_path() -> Path:
    """``$CHUNKSCOPE_STORE/triage.sqlite``, else ``./.chunkscope/triage.sqlite``."""
    return store_folder() / TRIAGE_FILENAME


def default_method(run: EvalRun) -> str:
    """The method triaged when none is named: an imported run's retriever; else the
    elaborate one of ``PAIRED`` (late) if the run has it, else the first."""
    imported = run.imported.get("method") if run.imported else None
    if isinstance(imported, str) and imported in run.methods:
        return imported  # an imported run is read for its own retriever's failures
    return next((m for m in reversed(PAIRED) if m in run.methods), run.methods[0])


def default_pair(run: EvalRun, pairs: list[str]) -> str | None:
    """The deltas pair shown first for an imported run: its retriever against the best of
    the other methods by hit@``text_k`` (then mrr); ``None`` when the run imported none or
    no pair of ``pairs`` (``"b-a"`` keys) holds the two."""
    yours = run.imported.get("method") if run.imported else None
    ours = [m for m in run.methods if m != yours]
    if not isinstance(yours, str) or yours not in run.methods or not ours:
        return None

    def score(method: str) -> tuple[float, float]:
        values = run.metrics.get(method, {})
        hit, mrr = values.get(f"hit@{run.text_k}"), values.get("mrr")
        return (-1.0 if hit is None else hit, -1.0 if mrr is None else mrr)

    best = max(ours, key=score)  # the first of equals, in the run's order
    return next((p for p in (f"{yours}-{best}", f"{best}-{yours}") if p in pairs), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tag:
    """A cause for one failed query of one run; ``tagged_at`` is ISO 8601 UTC."""

    run_id: str
    query_id: str
    doc_sha256: str
    cause: str
    note: str = ""
    method: str = ""
    tagged_at: str = ""
    suggested: str = ""  # the cause the diagnosis suggested when the human tagged it

    def to_dict(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "query_id": self.query_id,
            "doc_sha256": self.doc_sha256,
            "cause": self.cause,
            "note": self.note,
            "method": self.method,
            "tagged_at": self.tagged_at,
            "suggested": self.suggested,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One failed query to read: its gold, what was retrieved instead, its tag if any."""

    query_id: str
    query: str
    doc_id: str
    doc_sha256: str
    method: str
    rank: int | None
    gold: tuple[GoldSpan, ...]
    hits: tuple[tuple[RankedHit, Citation], ...]
    tag: Tag | None = None
    suggestion: Suggestion | None = None  # stored in the run by ``eval --out``

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.query_id,
            "query": self.query,
            "doc": self.doc_id,
            "doc_sha256": self.doc_sha256,
            "method": self.method,
            "rank": self.rank,
            "gold": [g.to_dict() for g in self.gold],
            "top": [hit.to_dict() | citation.to_dict() for hit, citation in self.hits],
            "tag": self.tag.to_dict() if self.tag else None,
            "suggested": self.suggestion.to_dict() if self.suggestion else None,
        }


def failed_queries(run: EvalRun, method: str) -> list[QueryRecord]:
    """Queries that failed under ``method``, sorted by id."""
    if method not in run.methods:
        raise LabelError(
            f"method {method!r} is not in run {run.run_id}: use {', '.join(run.methods)}"
        )
    return sorted((q for q in run.queries if q.failed[method]), key=lambda q: q.id)


def sample_failures(
    run: EvalRun,
    method: str | None = None,
    *,
    n: int = 20,
    seed: int = 0,
    store: TriageStore | None = None,
) -> list[Failure]:
    """Up to ``n`` failures under ``method`` (default: ``default_method``), drawn reproducibly;
    with a ``store``, each carries its current tag."""
    if n < 1:
        raise LabelError("the sample size must be at least 1")
    chosen = method or default_method(run)
    pool = failed_queries(run, chosen)
    order = np.random.default_rng(seed).permutation(len(pool))[:n]
    tags = tags_by_failure(store.tags(run.run_id)) if store else {}
    out = []
    for index in order:
        record = pool[int(index)]
        out.append(
            Failure(
                query_id=record.id,
                query=record.query,
                doc_id=record.doc_id,
                doc_sha256=record.doc_sha256,
                method=chosen,
                rank=record.ranks[chosen],
                gold=record.gold,
                hits=tuple(run.hits(record.id, chosen)[: run.text_k]),
                tag=tag_of_failure(tags, record.id, record.doc_sha256, chosen),
                suggestion=record.suggested.get(chosen),
            )
        )
    return out


TagKey = tuple[str, str, str]  # (query id, document sha256, method)


def tags_by_failure(tags: list[Tag]) -> dict[TagKey, Tag]:
    """Tags by (query id, document sha256, method)."""
    return {(t.query_id, t.doc_sha256, t.method): t for t in tags}


def tag_of_failure(tags: Mapping[TagKey, Tag], query_id: str, sha: str, method: str) -> Tag | None:
    """The tag of one failure under ``method`` (a tag made under no method, by an older
    file, stands for every method)."""
    return tags.get((query_id, sha, method)) or tags.get((query_id, sha, ""))


class TriageStore:
    """Cause tags in one SQLite file; every call opens and closes its own connection, so
    several processes (the UI, the CLI) can share the file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_triage_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > _SCHEMA_VERSION:
                raise LabelError(
                    f"{self.path} was written by a newer Chunkscope (triage schema {version}, "
                    f"this one reads {_SCHEMA_VERSION}): upgrade to read it"
                )
            conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(tags)")}
            if "suggested" not in columns:  # version 1: migrate in place
                conn.execute("ALTER TABLE tags ADD COLUMN suggested TEXT NOT NULL DEFAULT ''")
            (sql,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'tags'"
            ).fetchone()
            old_key = "doc_sha256, method)" not in sql  # before 4: one tag per query
            if old_key or any(repr(c) not in sql for c in CAUSES):  # older: rebuild the table
                conn.execute("ALTER TABLE tags RENAME TO tags_before")
                conn.execute(_SCHEMA)
                conn.execute(f"INSERT INTO tags ({_COLUMNS}) SELECT {_COLUMNS} FROM tags_before")
                conn.execute("DROP TABLE tags_before")
            conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=10)
        except sqlite3.Error as exc:
            raise LabelError(f"cannot open the triage file {self.path}: {exc}") from exc
        try:
            with conn:
                yield conn
        finally:
            conn.close()

    def tag(
        self,
        *,
        run_id: str,
        query_id: str,
        doc_sha256: str,
        cause: str,
        note: str | None = None,
        method: str = "",
        suggested: str = "",
    ) -> Tag:
        """Insert or replace the tag; ``note=None`` keeps the note already stored;
        ``suggested`` is the cause the diagnosis offered (stored beside the human's)."""
        if cause not in CAUSES:
            raise LabelError(f"unknown cause {cause!r}: use one of {', '.join(CAUSES)}")
        when = datetime.now(UTC).isoformat(timespec="seconds")
        with self._connect() as conn:
            conn.execute(
                f"INSERT INTO tags ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id, query_id, doc_sha256, method) DO UPDATE SET "
                "cause = excluded.cause, "
                "tagged_at = excluded.tagged_at, suggested = excluded.suggested, "
                "note = CASE WHEN ? THEN tags.note ELSE excluded.note END",
                (
                    run_id,
                    query_id,
                    doc_sha256,
                    cause,
                    note or "",
                    method,
                    when,
                    suggested,
                    note is None,
                ),  # fmt: skip
            )
        found = self.get(run_id=run_id, query_id=query_id, doc_sha256=doc_sha256, method=method)
        assert found is not None
        return found

    def untag(
        self, *, run_id: str, query_id: str, doc_sha256: str, method: str | None = None
    ) -> bool:
        """Remove the query's tag under ``method`` (``None``: under every method);
        returns whether there was one."""
        where = "run_id = ? AND query_id = ? AND doc_sha256 = ?"
        values: tuple[str, ...] = (run_id, query_id, doc_sha256)
        if method is not None:
            where, values = f"{where} AND method = ?", (*values, method)
        with self._connect() as conn:
            cursor = conn.execute(f"DELETE FROM tags WHERE {where}", values)
        return cursor.rowcount > 0

    def get(self, *, run_id: str, query_id: str, doc_sha256: str, method: str = "") -> Tag | None:
        """The tag of the query under ``method`` ('' the tag made under none)."""
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM tags WHERE run_id = ? AND query_id = ? "
                "AND doc_sha256 = ? AND method = ?",
                (run_id, query_id, doc_sha256, method),
            ).fetchone()
        return _tag_of(row) if row else None

    def tags(self, run_id: str) -> list[Tag]:
        """Every tag of a run (one per failure and method), ordered by query id, method."""
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM tags WHERE run_id = ? "
                "ORDER BY query_id, doc_sha256, method",
                (run_id,),
            ).fetchall()
        return [_tag_of(row) for row in rows]

    def tag_counts(self, run_id: str) -> dict[str, int]:
        """Tags per cause for one run (a failure under two methods tagged twice counts
        twice), every cause present (0 when unused), in CAUSES order."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT cause, COUNT(*) FROM tags WHERE run_id = ? GROUP BY cause", (run_id,)
            ).fetchall()
        found = dict(rows)
        return {cause: int(found.get(cause, 0)) for cause in CAUSES}


def _tag_of(row: tuple[object, ...]) -> Tag:
    """A row of ``SELECT {_COLUMNS}`` as a tag (``RecordError`` names a malformed column)."""
    fields = Fields(dict(zip(_COLUMN_NAMES, row, strict=True)), "triage tag")
    return Tag(**{name: fields.string(name) for name in _COLUMN_NAMES})


def agreement(store: TriageStore, run_id: str) -> tuple[int, int]:
    """``(tags made with a suggestion shown, of which the human chose the suggestion)``."""
    offered = [t for t in store.tags(run_id) if t.suggested]
    return len(offered), sum(t.cause == t.suggested for t in offered)


def tag_query(
    store: TriageStore,
    run: EvalRun,
    query_id: str,
    cause: str,
    *,
    note: str | None = None,
    method: str | None = None,
    suggested: str = "",
) -> Tag:
    """Tag a query of ``run`` (keyed by the run, the query and its document's sha256);
    ``suggested`` is the diagnosis's cause, kept beside the human's (default: the one the
    run stored for the method, if any)."""
    record = run.query(query_id)
    chosen = method or default_method(run)
    if chosen not in run.methods:
        raise LabelError(f"method {chosen!r} is not in run {run.run_id}")
    if not suggested and (stored := record.suggested.get(chosen)) is not None:
        suggested = stored.cause if stored.cause in CAUSES else ""
    return store.tag(
        run_id=run.run_id,
        query_id=record.id,
        doc_sha256=record.doc_sha256,
        cause=cause,
        note=note,
        method=chosen,
        suggested=suggested,
    )


def export_tags(store: TriageStore, run: EvalRun, path: str | os.PathLike[str]) -> int:
    """Write the run's tagged queries as JSONL (``.jsonl``) or CSV (``.csv``); returns rows."""
    file = Path(path)
    tagged = [(t, run.query(t.query_id)) for t in store.tags(run.run_id)]
    if file.suffix.lower() == ".jsonl":
        return write_queries(
            file,
            (
                record.as_label(
                    tag=t.cause,
                    note=t.note,
                    method=t.method,
                    run_id=run.run_id,
                    suggested=t.suggested or _stored(record, t.method).cause,
                    confidence=_stored(record, t.method).confidence,
                )  # fmt: skip
                for t, record in tagged
            ),
        )
    if file.suffix.lower() == ".csv":
        return _write_csv(file, tagged)
    raise LabelError(f"export to .jsonl or .csv, not {file.name}")


def _stored(record: QueryRecord, method: str) -> Suggestion:
    """The run's stored suggestion for the tag's method (empty when none was stored)."""
    return record.suggested.get(method) or Suggestion(cause="", confidence="")


def _write_csv(file: Path, tagged: list[tuple[Tag, QueryRecord]]) -> int:
    file.parent.mkdir(parents=True, exist_ok=True)
    columns = [
        "run_id",
        "query_id",
        "doc",
        "doc_sha256",
        "method",
        "cause",
        "suggested",
        "confidence",
        "note",
        "tagged_at",
        "ranks",
        "query",
        "gold",
    ]
    with file.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for tag, record in tagged:
            writer.writerow(
                [
                    tag.run_id,
                    record.id,
                    record.doc_id,
                    record.doc_sha256,
                    tag.method,
                    tag.cause,
                    tag.suggested or _stored(record, tag.method).cause,
                    _stored(record, tag.method).confidence,
                    tag.note,
                    tag.tagged_at,
                    json.dumps(dict(record.ranks)),
                    record.query,
                    " | ".join(g.text or f"[{g.char_start}, {g.char_end})" for g in record.gold),
                ]
            )
    return len(tagged)


def with_second_gold(
    run: EvalRun, query_id: str, char_start: int, char_end: int, text: str
) -> LabelledQuery:
    """The query of ``run`` as a query-set line with one more gold span (the answer
    standing in a second place of the same document, marked by the reader); spans already
    there are not repeated. Returns a ``LabelledQuery``."""
    record = run.query(query_id)
    span = GoldSpan(char_start=char_start, char_end=char_end, text=text)
    if len(text) != char_end - char_start:
        raise LabelError(f"a gold span's text must be its characters: [{char_start}, {char_end})")
    kept = record.gold if span in record.gold else (*record.gold, span)
    return LabelledQuery(
        id=record.id, query=record.query, doc=record.doc_id, gold=kept,
        doc_sha256=record.doc_sha256,
    )  # fmt: skip


def amended_query_set(run: EvalRun, amended: Mapping[str, LabelledQuery]) -> list[LabelledQuery]:
    """Every query of ``run`` as a query-set line, those in ``amended`` (query id ->
    ``LabelledQuery``) replaced: the set to run again after marking second gold spans."""
    return [amended.get(q.id) or q.as_label() for q in run.queries]
