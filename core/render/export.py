"""Export the chunks of one document as JSONL in the shapes other RAG libraries load.

Two shapes, one JSON object per line, one line per chunk, in chunk order:

* ``langchain``: a LangChain ``Document`` (``{"id", "page_content", "metadata",
  "type": "Document"}``; ``langchain_core.documents.Document(**row)`` loads it), with
  ``metadata["start_index"]`` = ``char_start``, the convention of LangChain's text
  splitters (``add_start_index=True``).
* ``llamaindex``: a LlamaIndex ``TextNode`` as ``TextNode.to_dict()`` writes it
  (``{"id_", "text", "start_char_idx", "end_char_idx", "metadata", "relationships",
  ..., "class_name": "TextNode"}``; ``TextNode.from_dict(row)`` loads it), its SOURCE
  relationship pointing at the document id with the document's sha256 as its hash; only
  the title and heading path are shown to its embedding and LLM.

Both carry the full provenance in ``metadata`` (``chunkscope_*`` keys, so they never
clash with a peer's own): document id, sha256, source, format, title, chunk id, the
half-open character span into the canonical text, pages, heading path, block kinds,
policy, token count, the rendered citation, transcript times in seconds and an HTML
chunk's half-open byte range of the raw file where the document has them, and for PDFs
one box per laid-out line (``[page, x0, y0, x1, y1]``,
points, origin top-left of the rendered page). ``read_export`` loads either shape back
and ``check_export`` verifies every offset against the document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.errors import ChunkscopeError
from core.provenance.cite import Citation
from core.provenance.types import Chunk, Document
from core.render.overlay import span_line_boxes

EXPORT_SHAPES: tuple[str, ...] = ("langchain", "llamaindex")
_SOURCE = "1"  # llama_index.core.schema.NodeRelationship.SOURCE
_DOCUMENT = "4"  # llama_index.core.schema.ObjectType.DOCUMENT
# metadata a LlamaIndex node shows its embedding and LLM (the rest is provenance)
_SHOWN = ("chunkscope_title", "chunkscope_heading_path")


class ExportError(ChunkscopeError):
    """An export line that is not one of our shapes, or offsets that do not hold."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportedChunk:
    """One exported chunk read back: its text, span and provenance metadata."""

    text: str
    char_start: int
    char_end: int
    metadata: dict[str, object]


def provenance(doc: Document, chunk: Chunk) -> dict[str, object]:
    """The ``chunkscope_*`` metadata of one chunk (JSON-ready)."""
    meta: dict[str, object] = {
        "chunkscope_doc_id": chunk.doc_id,
        "chunkscope_doc_sha256": chunk.doc_sha256,
        "chunkscope_source": doc.source,
        "chunkscope_kind": doc.kind,
        "chunkscope_title": doc.title,
        "chunkscope_chunk_id": chunk.chunk_id,
        "chunkscope_char_start": chunk.char_start,
        "chunkscope_char_end": chunk.char_end,
        "chunkscope_pages": list(chunk.pages),
        "chunkscope_heading_path": list(chunk.heading_path),
        "chunkscope_block_kinds": list(chunk.block_kinds),
        "chunkscope_policy": chunk.policy.key,
        "chunkscope_token_count": chunk.token_count,
        "chunkscope_citation": Citation.of_chunk(chunk).render(),
    }
    if chunk.start_s is not None:
        meta["chunkscope_start_s"] = chunk.start_s
        meta["chunkscope_end_s"] = chunk.end_s
    raw = doc.raw_range(chunk.char_start, chunk.char_end)
    if raw is not None:
        meta["chunkscope_raw_bytes"] = list(raw)
    if doc.is_paged:
        meta["chunkscope_boxes"] = [
            [line.page, *(round(v, 2) for v in line.bbox_pt)]
            for line in span_line_boxes(doc, chunk.char_start, chunk.char_end)
        ]
    return meta


def export_row(doc: Document, chunk: Chunk, shape: str) -> dict[str, object]:
    """One chunk in ``shape`` (see the module docstring)."""
    meta = provenance(doc, chunk)
    if shape == "langchain":
        return {
            "id": chunk.chunk_id,
            "page_content": chunk.text,
            "metadata": {"start_index": chunk.char_start, **meta},
            "type": "Document",
        }
    if shape == "llamaindex":
        hidden = [key for key in meta if key not in _SHOWN]
        return {
            "id_": chunk.chunk_id,
            "embedding": None,
            "metadata": meta,
            "excluded_embed_metadata_keys": hidden,
            "excluded_llm_metadata_keys": hidden,
            "relationships": {
                _SOURCE: {
                    "node_id": chunk.doc_id,
                    "node_type": _DOCUMENT,
                    "metadata": {},
                    "hash": chunk.doc_sha256,
                    "class_name": "RelatedNodeInfo",
                }
            },
            "text": chunk.text,
            "mimetype": "text/plain",
            "start_char_idx": chunk.char_start,
            "end_char_idx": chunk.char_end,
            "metadata_template": "{key}: {value}",
            "metadata_separator": "\n",
            "text_template": "{metadata_str}\n\n{content}",
            "class_name": "TextNode",
        }
    raise ExportError(f"unknown export shape {shape!r}; use one of {', '.join(EXPORT_SHAPES)}")


def export_jsonl(doc: Document, chunks: Sequence[Chunk], shape: str) -> str:
    """The chunks as JSONL (UTF-8 text, one object a line, a final newline)."""
    return "".join(
        json.dumps(export_row(doc, chunk, shape), ensure_ascii=False) + "\n" for chunk in chunks
    )


def read_export(lines: Iterable[str]) -> list[ExportedChunk]:
    """Chunks back from JSONL in either shape (``ExportError`` on a malformed line)."""
    found: list[ExportedChunk] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if "page_content" in row:
                meta = row["metadata"]
                text, start = row["page_content"], int(meta["start_index"])
                end = start + len(text)
            else:
                meta = row["metadata"]
                text, start, end = row["text"], int(row["start_char_idx"]), int(row["end_char_idx"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ExportError(
                f"export line {number} is not a chunk ({exc!r}); check the file"
            ) from None
        found.append(ExportedChunk(text=text, char_start=start, char_end=end, metadata=meta))
    return found


def check_export(doc: Document, exported: Sequence[ExportedChunk]) -> None:
    """Raise ``ExportError`` unless every exported chunk is an exact slice of ``doc``'s
    text at its offsets, made from these bytes (sha256)."""
    for k, chunk in enumerate(exported):
        if chunk.metadata.get("chunkscope_doc_sha256") != doc.sha256:
            raise ExportError(f"exported chunk {k} was made from other bytes than {doc.doc_id}")
        span = (
            chunk.metadata.get("chunkscope_char_start"),
            chunk.metadata.get("chunkscope_char_end"),
        )
        if span != (chunk.char_start, chunk.char_end):
            raise ExportError(f"exported chunk {k}: the peer's offsets disagree with ours")
        if doc.text[chunk.char_start : chunk.char_end] != chunk.text:
            raise ExportError(
                f"exported chunk {k}: chars {chunk.char_start}-{chunk.char_end} "
                "do not hold its text"
            )
