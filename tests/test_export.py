"""Exports in LangChain / LlamaIndex shapes: every offset survives the round trip, the
provenance travels in the metadata, and the rows load into the peers' own classes
(``langchain-core`` and ``llama-index-core``, pinned in ``requirements-dev.txt``)."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_DOCS, TEXT_CORPORA

from core.chunk import chunk_document, default_policy
from core.chunk import policy_registry as registry
from core.cli import main
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.types import Chunk, Document
from core.render.export import EXPORT_SHAPES, ExportError, check_export, export_jsonl, read_export

DOCS = [
    SAMPLE_DOCS / "sample-sigconf.pdf",
    TEXT_CORPORA / "wikitexts.md",
    ROOT / "tests" / "data" / "formats" / "lecture-3.vtt",
    ROOT / "tests" / "data" / "formats" / "pumps.html",
    ROOT / "tests" / "data" / "formats" / "third_party" / "python-docx_sct-inner-content.docx",
]
# TextNode.to_dict() of llama-index-core 0.14.25 has exactly these keys
TEXTNODE_KEYS = {
    "id_", "embedding", "metadata", "excluded_embed_metadata_keys",
    "excluded_llm_metadata_keys", "relationships", "metadata_template",
    "metadata_separator", "mimetype", "text", "start_char_idx", "end_char_idx", "text_template",
    "class_name",
}  # fmt: skip


@functools.cache
def chunked(path: Path, policy: str) -> tuple[Document, list[Chunk]]:
    doc = load_document(path)
    blocks = parse_document(doc).blocks
    return doc, chunk_document(doc, blocks, default_policy(policy), load_tokenizer())


@pytest.mark.parametrize("shape", EXPORT_SHAPES)
@pytest.mark.parametrize("policy", registry.policy_names())
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_round_trip_keeps_every_offset(path: Path, policy: str, shape: str) -> None:
    doc, chunks = chunked(path, policy)
    text = export_jsonl(doc, chunks, shape)
    assert text.count("\n") == len(chunks)
    back = read_export(text.splitlines())
    check_export(doc, back)
    assert len(back) == len(chunks)
    for chunk, row in zip(chunks, back, strict=True):
        assert (row.char_start, row.char_end, row.text) == (
            chunk.char_start, chunk.char_end, chunk.text,
        )  # fmt: skip
        assert doc.text[row.char_start : row.char_end] == row.text
        meta = row.metadata
        assert meta["chunkscope_chunk_id"] == chunk.chunk_id
        assert meta["chunkscope_pages"] == list(chunk.pages)
        assert meta["chunkscope_heading_path"] == list(chunk.heading_path)
        assert meta.get("chunkscope_start_s") == chunk.start_s
        raw = doc.raw_range(chunk.char_start, chunk.char_end)
        assert meta.get("chunkscope_raw_bytes") == (None if raw is None else list(raw))
        if doc.is_paged:
            assert meta["chunkscope_boxes"]
            assert {box[0] for box in meta["chunkscope_boxes"]} <= set(chunk.pages)
        else:
            assert "chunkscope_boxes" not in meta


def test_shapes_are_the_peers_own() -> None:
    doc, chunks = chunked(DOCS[0], "structure")
    lc = json.loads(export_jsonl(doc, chunks[:1], "langchain"))
    assert set(lc) == {"id", "page_content", "metadata", "type"} and lc["type"] == "Document"
    assert lc["metadata"]["start_index"] == chunks[0].char_start
    li = json.loads(export_jsonl(doc, chunks[:1], "llamaindex"))
    assert set(li) == TEXTNODE_KEYS and li["class_name"] == "TextNode"
    assert li["relationships"]["1"]["node_id"] == doc.doc_id
    assert set(li["metadata"]) - set(li["excluded_embed_metadata_keys"]) == {
        "chunkscope_title",
        "chunkscope_heading_path",
    }


def test_check_export_catches_moved_offsets_and_other_bytes() -> None:
    doc, chunks = chunked(DOCS[1], "fixed")
    back = read_export(export_jsonl(doc, chunks, "llamaindex").splitlines())
    moved = dataclasses.replace(back[3], char_start=back[3].char_start + 1)
    with pytest.raises(ExportError, match="disagree"):
        check_export(doc, [moved])
    shifted = dataclasses.replace(
        back[3],
        char_start=back[3].char_start + 1,
        char_end=back[3].char_end + 1,
        metadata={
            **back[3].metadata,
            "chunkscope_char_start": back[3].char_start + 1,
            "chunkscope_char_end": back[3].char_end + 1,
        },
    )
    with pytest.raises(ExportError, match="do not hold"):
        check_export(doc, [shifted])
    other = load_document(b"# Other\n\nA different document.\n", name="wikitexts.md")
    with pytest.raises(ExportError, match="other bytes"):
        check_export(other, back)
    with pytest.raises(ExportError, match="line 2 is not a chunk"):
        read_export(['{"text": "x", "start_char_idx": 0, "end_char_idx": 1, "metadata": {}}', "{}"])


def test_peer_classes_load_the_rows() -> None:
    from langchain_core import documents
    from llama_index.core import schema

    doc, chunks = chunked(DOCS[2], "structure")
    for line in export_jsonl(doc, chunks, "langchain").splitlines():
        row = json.loads(line)
        lc = documents.Document(**row)
        start = lc.metadata["start_index"]
        assert doc.text[start : start + len(lc.page_content)] == lc.page_content
    for line in export_jsonl(doc, chunks, "llamaindex").splitlines():
        node = schema.TextNode.from_dict(json.loads(line))
        assert doc.text[node.start_char_idx : node.end_char_idx] == node.text
        assert node.ref_doc_id == doc.doc_id and set(node.to_dict()) == TEXTNODE_KEYS


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "chunks.jsonl"
    path = DOCS[2]
    assert (
        main(
            ["export", str(path), "--policy", "sentence", "--shape", "langchain", "--out", str(out)]
        )
        == 0
    )
    assert "as langchain JSONL" in capsys.readouterr().out
    doc, chunks = chunked(path, "sentence")
    back = read_export(out.read_text(encoding="utf-8").splitlines())
    check_export(doc, back)
    assert [r.char_start for r in back] == [c.char_start for c in chunks]
    assert (
        main(["export", str(tmp_path / "missing.vtt"), "--policy", "fixed", "--shape", "langchain"])
        == 2
    )
    assert capsys.readouterr().err.startswith("error: ")
