"""Chunks made elsewhere, read as ``ForeignChunk`` records, one per imported chunk.

Shapes (sniffed from the first row when not named):

* ``langchain``: LangChain ``Document`` rows (``page_content``, ``metadata``), JSONL or a
  JSON list, as ``Document.model_dump()`` or our LangChain export writes them. The text
  splitters' ``add_start_index=True`` puts the offset in ``metadata["start_index"]``; the
  loaders put the file in ``metadata["source"]`` and a PDF loader's 0-based page number
  in ``metadata["page"]``.
* ``llamaindex``: ``TextNode.to_dict()`` rows (``text``, ``start_char_idx``,
  ``end_char_idx``, ``metadata``, ``relationships``); the file is ``metadata["file_name"]``
  (else ``file_path``, else the SOURCE relationship's node id) and a PDF reader's page is
  ``metadata["page_label"]``, 1-based.
* ``chunks``: plain rows ``{"doc", "text"}`` with optional ``char_start``, ``char_end``
  and a 1-based ``page``.
* a Chroma collection (``read_chroma``) as LangChain's Chroma integration writes it (the
  text as the record's document, the ``Document`` metadata as its metadata) or as
  LlamaIndex's does (the node, without its text, as JSON in the ``_node_content``
  metadata key, the text as the record's document).

``Keys`` names the metadata keys to read (``--source-key``, ``--start-key``,
``--page-key``) and the number of the first page (``--page-base``); each shape has its
library's keys as defaults. Every problem with the input is an ``ImportChunksError`` with
one line naming the row; nothing is read halfway.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.config import StoreLocation, parse_host
from core.errors import ChunkscopeError, StoreError
from core.imported.loader_text import hinted_extractor
from core.imported.named_splitter import NamedSplitter, splitter_named
from core.provenance.serial import json_objects
from core.store.client import connect

SHAPES: tuple[str, ...] = ("langchain", "llamaindex", "chunks")
MAX_ROWS = 2_000_000
_SOURCE_RELATION = "1"  # llama_index.core.schema.NodeRelationship.SOURCE


class ImportChunksError(ChunkscopeError):
    """An import that cannot be read: another shape, a row without text, a collection
    that does not exist, a server that does not answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Keys:
    """Where a row keeps its document, claimed offset and page; ``page_base`` is the number
    the import gives the first page (0 for LangChain's PDF loaders)."""

    source: str
    start: str
    page: str
    page_base: int


DEFAULT_KEYS: dict[str, Keys] = {
    "langchain": Keys(source="source", start="start_index", page="page", page_base=0),
    "llamaindex": Keys(source="file_name", start="start_char_idx", page="page_label", page_base=1),
    "chunks": Keys(source="doc", start="char_start", page="page", page_base=1),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignChunk:
    """One imported chunk as the import states it.

    ``index``: its place in the import (0-based); ``source``: the document as the import
    names it (a path, a file name or an id); ``claimed_start``/``claimed_end``: the
    offsets it came with (``None`` when it has none); ``page``: 1-based; ``loader``: the
    extractor its metadata points at (``core.imported.loader_text.hinted_extractor``);
    ``splitter``: the splitter it names (``core.imported.named_splitter``).
    """

    index: int
    text: str
    source: str | None
    claimed_start: int | None
    claimed_end: int | None
    page: int | None
    foreign_id: str | None
    loader: str | None = None
    splitter: NamedSplitter | None = None


def keys_for(shape: str, *, source: str | None, start: str | None, page: str | None,
             page_base: int | None) -> Keys:  # fmt: skip
    """The shape's default keys with any given one replaced."""
    base = DEFAULT_KEYS[shape]
    return replace(
        base,
        source=source or base.source,
        start=start or base.start,
        page=page or base.page,
        page_base=base.page_base if page_base is None else page_base,
    )


def parse_rows(data: bytes, name: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file or a JSON list (``ImportChunksError`` otherwise)."""
    return json_objects(data, name, what="chunks", error=ImportChunksError, limit=MAX_ROWS)


def sniff_shape(row: Mapping[str, Any], name: str) -> str:
    """The shape of a row (``ImportChunksError`` naming what was seen when none fits)."""
    if "page_content" in row:
        return "langchain"
    if "text" in row and (
        "start_char_idx" in row or row.get("class_name") == "TextNode" or "id_" in row
    ):
        return "llamaindex"
    if "text" in row and "doc" in row:
        return "chunks"
    seen = ", ".join(sorted(map(str, row))[:8]) or "no keys"
    raise ImportChunksError(
        f"{name}: rows are not LangChain Documents (page_content), LlamaIndex TextNodes "
        f"(text, start_char_idx) or chunk rows (doc, text); the first has {seen}"
    )


def _offset(value: Any, what: str, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ImportChunksError(f"{where}: {what} is not a number ({value!r})")
    try:
        number = float(value)
    except ValueError:
        raise ImportChunksError(f"{where}: {what} is not a number ({value!r})") from None
    if number != int(number):
        raise ImportChunksError(f"{where}: {what} is not a whole number ({value!r})")
    return int(number)


def _page(value: Any, keys: Keys, where: str) -> int | None:
    number = _offset(value, f"the page ({keys.page})", where)
    return None if number is None else number - keys.page_base + 1


def _text(value: Any, field: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ImportChunksError(f"{where} has no text ({field}): every chunk needs its text")
    return value


def _source(meta: Mapping[str, Any], keys: Keys, fallback: Any = None) -> str | None:
    value = meta.get(keys.source)
    if value in (None, "") and keys.source == "file_name":
        value = meta.get("file_path")
    if value in (None, ""):
        value = fallback
    return None if value in (None, "") else str(value)


def _langchain(row: Mapping[str, Any], index: int, keys: Keys, where: str) -> ForeignChunk:
    meta = row.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ImportChunksError(f"{where}: metadata is not an object")
    start = _offset(meta.get(keys.start), keys.start, where)
    ident = row.get("id")
    return ForeignChunk(
        index=index,
        text=_text(row.get("page_content"), "page_content", where),
        source=_source(meta, keys),
        claimed_start=start,
        claimed_end=None,
        page=_page(meta.get(keys.page), keys, where),
        foreign_id=None if ident in (None, "") else str(ident),
        loader=hinted_extractor(meta),
        splitter=splitter_named(meta, "langchain"),
    )


def _llamaindex(row: Mapping[str, Any], index: int, keys: Keys, where: str) -> ForeignChunk:
    meta = row.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ImportChunksError(f"{where}: metadata is not an object")
    relations = row.get("relationships") or {}
    parent = relations.get(_SOURCE_RELATION) if isinstance(relations, dict) else None
    parent_id = parent.get("node_id") if isinstance(parent, dict) else None
    start_key = keys.start
    start = _offset(row.get(start_key, meta.get(start_key)), start_key, where)
    end = _offset(row.get("end_char_idx"), "end_char_idx", where)
    ident = row.get("id_")
    return ForeignChunk(
        index=index,
        text=_text(row.get("text"), "text", where),
        source=_source(meta, keys, parent_id),
        claimed_start=start,
        claimed_end=end if start is not None else None,
        page=_page(meta.get(keys.page), keys, where),
        foreign_id=None if ident in (None, "") else str(ident),
        loader=hinted_extractor(meta),
        splitter=splitter_named(meta, "llamaindex"),
    )


def _plain(row: Mapping[str, Any], index: int, keys: Keys, where: str) -> ForeignChunk:
    start = _offset(row.get(keys.start), keys.start, where)
    end = _offset(row.get("char_end"), "char_end", where)
    ident = row.get("id", row.get("chunk_id"))
    return ForeignChunk(
        index=index,
        text=_text(row.get("text"), "text", where),
        source=_source(row, keys),
        claimed_start=start,
        claimed_end=end if start is not None else None,
        page=_page(row.get(keys.page), keys, where),
        foreign_id=None if ident in (None, "") else str(ident),
        splitter=splitter_named(row, "chunks"),
    )


_READERS = {"langchain": _langchain, "llamaindex": _llamaindex, "chunks": _plain}


def read_rows(
    rows: Sequence[Mapping[str, Any]], shape: str, keys: Keys, name: str
) -> list[ForeignChunk]:
    """Every row as a ``ForeignChunk`` of ``shape`` (a row of another shape is refused)."""
    reader = _READERS[shape]
    chunks = []
    for index, row in enumerate(rows):
        where = f"{name} row {index + 1}"
        if shape != "chunks" and sniff_shape(row, where) != shape:
            raise ImportChunksError(f"{where} is not a {shape} row; import one shape at a time")
        chunks.append(reader(row, index, keys, where))
    return chunks


def read_file(
    data: bytes, name: str, *, shape: str | None = None, keys: dict[str, Any] | None = None
) -> tuple[str, list[ForeignChunk]]:
    """The shape and chunks of a JSONL/JSON file; ``keys`` overrides ``Keys`` fields."""
    rows = parse_rows(data, name)
    if shape is not None and shape not in SHAPES:
        raise ImportChunksError(f"unknown shape {shape!r}: use one of {', '.join(SHAPES)}")
    found = shape or sniff_shape(rows[0], f"{name} row 1")
    chosen = keys_for(found, **_key_args(keys))
    return found, read_rows(rows, found, chosen, name)


def _key_args(keys: dict[str, Any] | None) -> dict[str, Any]:
    given = keys or {}
    return {k: given.get(k) for k in ("source", "start", "page", "page_base")}


def chroma_rows(
    documents: Sequence[Any], metadatas: Sequence[Any], ids: Sequence[str]
) -> tuple[str, list[dict[str, Any]]]:
    """A Chroma collection's records as rows of one shape: LlamaIndex nodes when they carry
    ``_node_content``, else LangChain Documents."""
    rows: list[dict[str, Any]] = []
    shape = "langchain"
    for number, (text, meta, ident) in enumerate(zip(documents, metadatas, ids, strict=True), 1):
        meta = dict(meta or {})
        node = meta.pop("_node_content", None)
        if node is not None:
            shape = "llamaindex"
            try:
                row = json.loads(node)
            except (TypeError, json.JSONDecodeError):
                raise ImportChunksError(
                    f"record {number} ({ident}): _node_content is not JSON"
                ) from None
            if not isinstance(row, dict):
                raise ImportChunksError(f"record {number} ({ident}): _node_content is not a node")
            row["text"] = text
            flat = {k: v for k, v in meta.items() if not k.startswith("_")}
            row["metadata"] = {**(row.get("metadata") or {}), **flat}
            row.setdefault("id_", ident)
        else:
            row = {"id": ident, "page_content": text, "metadata": meta}
        rows.append(row)
    kinds = {"llamaindex" if "text" in r else "langchain" for r in rows}
    if len(kinds) > 1:
        raise ImportChunksError("the collection mixes LlamaIndex nodes and other records")
    return shape, rows


def read_chroma(
    where: str, collection: str, *, keys: dict[str, Any] | None = None
) -> tuple[str, list[ForeignChunk]]:
    """The chunks of Chroma collection ``collection`` in ``where`` (a folder with
    ``chroma.sqlite3``, or a server ``HOST:PORT``), in the collection's order."""
    from pathlib import Path

    folder = Path(where).expanduser()
    if folder.is_dir():
        if not (folder / "chroma.sqlite3").is_file():
            raise ImportChunksError(f"{where} is not a Chroma folder (no chroma.sqlite3 in it)")
        location = StoreLocation(path=folder.resolve())
    else:
        try:
            host, port = parse_host(where)
        except StoreError:
            raise ImportChunksError(
                f"--chroma {where}: not a folder, nor a server HOST:PORT"
            ) from None
        location = StoreLocation(host=host, port=port)
    client = connect(location)
    names = sorted(c if isinstance(c, str) else c.name for c in client.list_collections())
    if collection not in names:
        listed = ", ".join(names[:12]) or "none"
        raise ImportChunksError(
            f"no collection {collection!r} in {location.describe()} (it has: {listed})"
        )
    got = client.get_collection(collection).get(include=["documents", "metadatas"])
    shape, rows = chroma_rows(got["documents"] or [], got["metadatas"] or [], got["ids"])
    if not rows:
        raise ImportChunksError(f"collection {collection!r} is empty")
    label = f"collection {collection}"
    return shape, read_rows(rows, shape, keys_for(shape, **_key_args(keys)), label)
