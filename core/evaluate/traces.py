"""What a retriever returned per query, read from its log: ``TraceQuery`` records.

Shapes (sniffed from the first record unless named):

* ``hits``: JSONL, one line a query: ``{"query_id", "query", "hits": [{"chunk_id" |
  ("text" and "source"), "score"?, "rank"?}]}``; ``chunk_id`` is the id the imported
  chunk set knows (a LangChain ``Document.id``, a LlamaIndex node id, a collection's
  record id); a hit without one is given by its text (and, where several documents are
  in play, its ``source``).
* ``ragas``: a Ragas evaluation dataset as JSONL or a JSON list of samples
  (``user_input`` or ``question``; ``retrieved_contexts`` or ``contexts``, a list of
  texts in rank order; ``reference`` or ``ground_truth`` kept as a note), with no ids and
  no scores: hits are given by text.
* ``openinference``: spans as JSONL or a JSON list, as Phoenix exports them, with the
  OpenInference attributes, nested (``{"attributes": {"input.value", "retrieval.documents":
  [{"document.id", "document.content", "document.score"}]}}``) or flattened
  (``"attributes.input.value"``, ``"attributes.retrieval.documents"``); only spans that
  carry ``retrieval.documents`` are read, and a span's ``context.span_id`` (or ``span_id``)
  is its query id.

Ranks are 1-based in the order given unless a hit states its ``rank``. Every problem is a
``TraceError`` with one line naming the record; nothing is read halfway.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import ChunkscopeError
from core.provenance.serial import json_objects

TRACE_SHAPES: tuple[str, ...] = ("hits", "ragas", "openinference")
_DOCS = "retrieval.documents"
_INPUT = "input.value"


class TraceError(ChunkscopeError):
    """A retrieval log that cannot be read, or that does not fit the labels or chunk set."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceHit:
    """One returned chunk: by ``chunk_id``, or by ``text`` (with ``source`` when known)."""

    rank: int
    chunk_id: str | None
    text: str | None
    source: str | None
    score: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceQuery:
    """One logged query: its id and text (either may be missing, not both) and its hits,
    best first; ``note`` is what the log says the answer is (Ragas' reference)."""

    query_id: str | None
    query: str | None
    hits: tuple[TraceHit, ...]
    note: str = ""


def _records(data: bytes, name: str) -> list[dict[str, Any]]:
    return json_objects(data, name, what="what was retrieved per query", error=TraceError)


def _attributes(row: Mapping[str, Any]) -> dict[str, Any]:
    """A span's attributes, nested or flattened (``attributes.<key>``)."""
    nested = row.get("attributes")
    out = dict(nested) if isinstance(nested, dict) else {}
    for key, value in row.items():
        if key.startswith("attributes."):
            out[key.removeprefix("attributes.")] = value
    return out


def sniff_trace(row: Mapping[str, Any], name: str) -> str:
    """The shape of a record (``TraceError`` naming what was seen when none fits)."""
    if "hits" in row:
        return "hits"
    if any(k in row for k in ("retrieved_contexts", "contexts")):
        return "ragas"
    spanlike = (
        "span_kind" in row or "attributes" in row or any(k.startswith("attributes.") for k in row)
    )
    if spanlike:  # a span export: its first span may be the chain or the LLM call
        return "openinference"
    seen = ", ".join(sorted(map(str, row))[:8]) or "no keys"
    raise TraceError(
        f"{name}: records are not query hits (hits), Ragas samples (retrieved_contexts) or "
        f"OpenInference retriever spans (retrieval.documents); the first has {seen}"
    )


def _number(value: Any, what: str, where: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise TraceError(f"{where}: {what} is not a number ({value!r})")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TraceError(f"{where}: {what} is not a number ({value!r})") from None


def _hit(raw: Any, position: int, where: str) -> TraceHit:
    if isinstance(raw, str):
        raw = {"text": raw}
    if not isinstance(raw, dict):
        raise TraceError(f"{where}: hit {position} is not an object or a text")
    chunk_id = raw.get("chunk_id", raw.get("id"))
    text = raw.get("text", raw.get("content"))
    if chunk_id in (None, "") and not (isinstance(text, str) and text.strip()):
        raise TraceError(f"{where}: hit {position} has neither a chunk_id nor a text")
    rank = _number(raw.get("rank"), "rank", where)
    if rank is not None and (rank != int(rank) or rank < 1):
        raise TraceError(f"{where}: hit {position} has rank {raw.get('rank')!r}: ranks start at 1")
    source = raw.get("source", raw.get("doc"))
    return TraceHit(
        rank=position if rank is None else int(rank),
        chunk_id=None if chunk_id in (None, "") else str(chunk_id),
        text=text if isinstance(text, str) and text.strip() else None,
        source=None if source in (None, "") else str(source),
        score=_number(raw.get("score"), "score", where),
    )


def _ranked(hits: list[TraceHit], where: str) -> tuple[TraceHit, ...]:
    ordered = sorted(hits, key=lambda h: h.rank)
    ranks = [h.rank for h in ordered]
    if len(set(ranks)) != len(ranks):
        raise TraceError(f"{where}: two hits share a rank")
    return tuple(ordered)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _plain(row: Mapping[str, Any], where: str) -> TraceQuery:
    hits = row.get("hits")
    if not isinstance(hits, list):
        raise TraceError(f"{where}: hits is not a list")
    ident = row.get("query_id", row.get("id"))
    query = _text(row.get("query"))
    if ident in (None, "") and query is None:
        raise TraceError(f"{where} has neither a query_id nor a query")
    return TraceQuery(
        query_id=None if ident in (None, "") else str(ident),
        query=query,
        hits=_ranked([_hit(h, i, where) for i, h in enumerate(hits, 1)], where),
    )


def _ragas(row: Mapping[str, Any], where: str) -> TraceQuery:
    query = _text(row.get("user_input", row.get("question")))
    if query is None:
        raise TraceError(f"{where} has no question (user_input)")
    contexts = row.get("retrieved_contexts", row.get("contexts"))
    if not isinstance(contexts, list):
        raise TraceError(f"{where}: retrieved_contexts is not a list of texts")
    note = row.get("reference", row.get("ground_truth"))
    return TraceQuery(
        query_id=None,
        query=query,
        hits=tuple(_hit({"text": c}, i, where) for i, c in enumerate(contexts, 1)),
        note=note if isinstance(note, str) else "",
    )


def _span(row: Mapping[str, Any], where: str) -> TraceQuery | None:
    attributes = _attributes(row)
    documents = attributes.get(_DOCS)
    if documents is None:
        return None  # another kind of span (the LLM call, the chain): not a retrieval
    if isinstance(documents, str):
        try:
            documents = json.loads(documents)
        except json.JSONDecodeError:
            raise TraceError(f"{where}: retrieval.documents is not JSON") from None
    if not isinstance(documents, list):
        raise TraceError(f"{where}: retrieval.documents is not a list")
    hits = []
    for position, doc in enumerate(documents, 1):
        if not isinstance(doc, dict):
            raise TraceError(f"{where}: retrieval document {position} is not an object")
        meta = doc.get("document.metadata") or {}
        if isinstance(meta, str):
            try:
                meta = json.loads(meta)
            except json.JSONDecodeError:
                meta = {}
        source = meta.get("source", meta.get("file_name")) if isinstance(meta, dict) else None
        raw = {"chunk_id": doc.get("document.id"), "text": doc.get("document.content"),
               "score": doc.get("document.score"), "source": source}  # fmt: skip
        hits.append(_hit(raw, position, where))
    nested = row.get("context")
    context: dict[str, Any] = nested if isinstance(nested, dict) else {}
    ident = row.get("context.span_id", context.get("span_id", row.get("span_id")))
    return TraceQuery(
        query_id=None if ident in (None, "") else str(ident),
        query=_text(attributes.get(_INPUT)),
        hits=tuple(hits),
    )


def read_trace(data: bytes, name: str, *, shape: str | None = None) -> tuple[str, list[TraceQuery]]:
    """The shape and queries of a retrieval log (see the module docstring)."""
    rows = _records(data, name)
    if shape is not None and shape not in TRACE_SHAPES:
        raise TraceError(f"unknown trace shape {shape!r}: use one of {', '.join(TRACE_SHAPES)}")
    found = shape or sniff_trace(rows[0], f"{name} record 1")
    queries: list[TraceQuery] = []
    for number, row in enumerate(rows, 1):
        where = f"{name} record {number}"
        if found == "hits":
            queries.append(_plain(row, where))
        elif found == "ragas":
            queries.append(_ragas(row, where))
        else:
            span = _span(row, where)
            if span is not None:
                queries.append(span)
    if not queries:
        raise TraceError(f"{name} holds no retrieval (no span carries retrieval.documents)")
    return found, queries


def trace_depth(queries: Sequence[TraceQuery]) -> int:
    """The most hits any query logged (the deepest rank the log can tell)."""
    return max((len(q.hits) for q in queries), default=0)
