"""Bring your own chunks: anchors, claim audits, shapes, the set as a policy, bad input.

Rows are made by the peers' own classes (langchain-core's ``Document`` and its text
splitter, llama-index-core's ``TextNode`` and ``SentenceSplitter``), and the known bugs of
their offsets are seeded by hand: a repeated chunk given its first occurrence's offset,
``-1``, a chunk of another document."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from langchain_core.documents import Document as LCDocument
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import Document as LIDocument
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from core.chunk import chunk_document, policy_from_args
from core.chunk import policy_registry as registry
from core.cli import main
from core.formats import load_document, parse_document
from core.imported import (
    ImportChunksError,
    chunk_sets,
    import_chunks,
    read_chroma,
    read_file,
    register_chunk_sets,
    save_chunk_set,
)
from core.imported.loader_text import extractor_label
from core.imported.shapes import ForeignChunk
from tests.conftest import CORPUS, PDF_DIR

REPEATED = "The warranty covers parts and labour for two years from the date of purchase."
PARAGRAPHS = [
    "# Service terms",
    "Orders ship within five working days. " * 3,
    REPEATED,
    "Returns are accepted within thirty days when the item is unused and boxed.",
    "## Batteries",
    REPEATED,
    "Batteries are consumables: they are covered for six months only.",
    "## Displays",
    REPEATED,
    "A display with fewer than five dead pixels is within specification.",
]


@pytest.fixture
def terms(tmp_path: Path) -> Path:
    path = tmp_path / "terms.md"
    path.write_text("\n\n".join(PARAGRAPHS) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_leftover_sets() -> Iterator[None]:
    yield
    for name in registry.fixed_names():
        registry.unregister_fixed(name)


def langchain_rows(path: Path, size: int = 120, overlap: int = 0) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, add_start_index=True
    )
    docs = splitter.split_documents([LCDocument(page_content=text, metadata={"source": str(path)})])
    return [d.model_dump() for d in docs]


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def run_import(rows: list[dict], docs, **kwargs):
    shape, chunks = read_file(jsonl(rows), "rows.jsonl", **kwargs)
    chunk_set, _ = import_chunks(chunks, docs, name="mine", shape=shape, origin="rows.jsonl")
    return chunk_set


def test_correct_langchain_offsets_are_exact_and_ok(terms: Path) -> None:
    doc = load_document(terms)
    rows = langchain_rows(terms)
    chunk_set = run_import(rows, [doc])
    for row, chunk in zip(rows, chunk_set.chunks, strict=True):
        a = chunk.anchor
        assert (a.anchor, a.claim) == ("exact", "ok"), a
        assert a.char_start == row["metadata"]["start_index"]
        assert doc.text[a.char_start : a.char_end] == row["page_content"]
    assert chunk_set.counts()["anchor"]["exact"] == len(rows)


def test_seeded_langchain_bugs_get_their_verdicts(terms: Path) -> None:
    doc = load_document(terms)
    rows = langchain_rows(terms)
    truth = [r["metadata"]["start_index"] for r in rows]
    repeats = [k for k, r in enumerate(rows) if r["page_content"] == REPEATED]
    assert len(repeats) == 3
    second, third = repeats[1], repeats[2]
    rows[second]["metadata"]["start_index"] = truth[repeats[0]]  # first-occurrence offset
    rows[third]["metadata"]["start_index"] = -1  # the splitter lost it
    absent = next(k for k in range(len(rows)) if k not in repeats)
    del rows[absent]["metadata"]["start_index"]
    foreign = dict(rows[-1], page_content="A sentence from a manual this file never held.")
    rows.append(foreign)
    chunk_set = run_import(rows, [doc])
    by_index = {c.anchor.index: c.anchor for c in chunk_set.chunks}

    wrong = by_index[second]
    assert (wrong.anchor, wrong.claim) == ("exact", "wrong")
    assert wrong.char_start == truth[second]  # placed by its neighbours, not the claim
    assert f"claims {truth[repeats[0]]:,}, its 1st occurrence" in wrong.detail
    assert f"text is at {truth[second]:,}, its 2nd occurrence" in wrong.detail
    lost = by_index[third]
    assert (lost.anchor, lost.claim, lost.char_start) == ("exact", "wrong", truth[third])
    assert "claims -1" in lost.detail and "3rd occurrence" in lost.detail
    assert (by_index[absent].claim, by_index[absent].char_start) == ("absent", truth[absent])
    stray = by_index[len(rows) - 1]
    assert (stray.anchor, stray.char_start) == ("missing", None)
    others = [a for k, a in by_index.items() if k not in (second, third, absent, len(rows) - 1)]
    assert all((a.anchor, a.claim) == ("exact", "ok") for a in others)
    for k, a in by_index.items():
        if a.char_start is not None:
            assert a.char_start == truth[k]


def test_repeats_without_offsets_or_order_are_ambiguous(terms: Path) -> None:
    doc = load_document(terms)
    only = ForeignChunk(index=0, text=REPEATED, source=None, claimed_start=None,
                        claimed_end=None, page=None, foreign_id=None)  # fmt: skip
    chunk_set, _ = import_chunks([only], [doc], name="alone", shape="chunks", origin="x")
    anchor = chunk_set.chunks[0].anchor
    assert (anchor.anchor, anchor.places, anchor.char_start) == ("ambiguous", 3, None)
    assert "occurs 3 times" in anchor.detail


def test_llamaindex_nodes_and_their_first_occurrence_bug(terms: Path) -> None:
    text = terms.read_text(encoding="utf-8")
    doc = load_document(terms)
    splitter = SentenceSplitter(chunk_size=16, chunk_overlap=0, tokenizer=str.split)
    nodes = splitter.get_nodes_from_documents(
        [LIDocument(text=text, metadata={"file_name": terms.name})]
    )
    truth = [n.start_char_idx for n in nodes]
    rows = [n.to_dict() for n in nodes]
    repeated = [k for k, n in enumerate(nodes) if text.count(n.text) > 1]
    assert len(repeated) >= 2
    for k in repeated:  # the peer's bug: a duplicate text gets its first occurrence
        rows[k]["start_char_idx"] = truth[repeated[0]]
        rows[k]["end_char_idx"] = truth[repeated[0]] + len(nodes[k].text)
    chunk_set = run_import(rows, [doc])
    assert chunk_set.shape == "llamaindex"
    for k, chunk in enumerate(chunk_set.chunks):
        a = chunk.anchor
        assert a.anchor == "exact" and a.char_start == truth[k]
        expected = "wrong" if k in repeated[1:] else "ok"
        assert a.claim == expected, (k, a)


def test_pdf_split_by_a_per_page_loader_is_anchored_and_checked(tmp_path: Path) -> None:
    path = PDF_DIR / "sample-sigconf.pdf"
    doc = load_document(path)
    pages = [
        LCDocument(page_content=page.get_text(), metadata={"source": str(path), "page": number})
        for number, page in enumerate(pymupdf.open(path))
    ]
    rows = [
        d.model_dump()
        for d in RecursiveCharacterTextSplitter(
            chunk_size=600, chunk_overlap=60, add_start_index=True
        ).split_documents(pages)
    ]
    chunk_set = run_import(rows, [doc])
    anchors = [c.anchor for c in chunk_set.chunks]
    placed = [a for a in anchors if a.anchor in ("exact", "aligned")]
    assert len(placed) >= 0.95 * len(anchors)
    # per-page offsets into PyMuPDF's page text (no metadata names it): found by trial
    assert {a.claim for a in anchors} == {"ok"}
    assert {a.page_claim for a in anchors} == {"ok"}
    assert chunk_set.checks["extractor_how"] == "trial"
    assert chunk_set.checks["extractors"] == {doc.doc_id: extractor_label("pymupdf")}
    for chunk in chunk_set.chunks:
        a = chunk.anchor
        if a.char_start is None:
            continue
        assert chunk.given.page in a.pages  # on the page the loader read it from
        span_words = set(doc.text[a.char_start : a.char_end].split())
        assert len(set(chunk.given.text.split()) & span_words) >= 0.8 * len(
            set(chunk.given.text.split())
        )


def test_chroma_collections_of_both_libraries(tmp_path: Path, terms: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    doc = load_document(terms)
    rows = langchain_rows(terms)
    client = chromadb.PersistentClient(str(tmp_path / "db"), Settings(anonymized_telemetry=False))
    lc = client.create_collection("langchain_docs")
    lc.add(  # as langchain-chroma's add_documents writes them: text, metadata, uuid ids
        ids=[f"id-{k}" for k in range(len(rows))],
        documents=[r["page_content"] for r in rows],
        metadatas=[r["metadata"] for r in rows],
        embeddings=[[0.1, 0.2, float(k)] for k in range(len(rows))],
    )
    nodes = [
        TextNode(
            text=r["page_content"],
            start_char_idx=r["metadata"]["start_index"],
            end_char_idx=r["metadata"]["start_index"] + len(r["page_content"]),
            metadata={"file_name": terms.name},
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="terms-doc")},
        )
        for r in rows
    ]
    li = client.create_collection("llama_nodes")
    li.add(  # as llama-index's ChromaVectorStore writes them (flat metadata, no text)
        ids=[n.node_id for n in nodes],
        documents=[n.get_content() for n in nodes],
        metadatas=[node_to_metadata_dict(n, remove_text=True, flat_metadata=True) for n in nodes],
        embeddings=[[0.1, 0.2, float(k)] for k in range(len(nodes))],
    )
    del client
    for name, shape in (("langchain_docs", "langchain"), ("llama_nodes", "llamaindex")):
        found, chunks = read_chroma(str(tmp_path / "db"), name)
        assert found == shape
        chunk_set, _ = import_chunks(chunks, [doc], name=name, shape=found, origin=name)
        assert chunk_set.counts()["anchor"]["exact"] == len(rows)
        assert chunk_set.counts()["claim"]["ok"] == len(rows)
    listed = "no collection 'nope'.*it has: langchain_docs, llama_nodes"
    with pytest.raises(ImportChunksError, match=listed):
        read_chroma(str(tmp_path / "db"), "nope")


def test_the_set_is_a_policy_with_exact_spans(tmp_path: Path, terms: Path) -> None:
    doc = load_document(terms)
    rows = langchain_rows(terms, size=200, overlap=40)
    chunk_set = run_import(rows, [doc])
    save_chunk_set(tmp_path, chunk_set)
    assert set(register_chunk_sets(tmp_path)) == {"mine"}
    assert "mine" in registry.policy_names()
    policy = policy_from_args("mine")
    with pytest.raises(registry.PolicyError, match="boundaries are fixed"):
        policy_from_args("mine", size=100)
    chunks = chunk_document(doc, parse_document(doc).blocks, policy)
    spans = sorted({(c.anchor.char_start, c.anchor.char_end) for c in chunk_set.chunks})
    assert [(c.char_start, c.char_end) for c in chunks] == spans
    for chunk in chunks:
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
    other = load_document(PDF_DIR / "sample-sigconf.pdf")
    assert chunk_document(other, [], policy) == []  # the set holds none of its chunks


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_report_and_replacement(
    tmp_path: Path, terms: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = langchain_rows(terms)
    rows[3]["metadata"]["start_index"] += 5
    file = tmp_path / "chunks.jsonl"
    file.write_bytes(jsonl(rows))
    store = tmp_path / "store"
    code, out, err = _cli(capsys, "import-chunks", str(file), "--docs", str(terms),
                          "--store", str(store), "--json")  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["name"] == "chunks"
    first = report["chunks"][0]
    for key in ("index", "doc_id", "anchor", "char_start", "char_end", "coverage", "pages",
                "claim", "claimed_start"):  # fmt: skip
        assert key in first
    assert report["counts"]["claim"]["wrong"] == 1
    assert report["chunks"][3]["claim"] == "wrong"
    code, out, _ = _cli(capsys, "import-chunks", str(file), "--docs", str(terms),
                        "--store", str(store))  # fmt: skip
    assert code == 0
    assert "wrong 1" in out and "claims" in out
    assert list(chunk_sets(store / "chunksets")) == ["chunks"]  # replaced, not added


def test_bad_input_is_one_line_and_keeps_nothing(
    tmp_path: Path, terms: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    queries = CORPUS / "financebench" / "questions.jsonl"
    no_text = tmp_path / "no_text.jsonl"
    no_text.write_bytes(jsonl([{"page_content": "  ", "metadata": {"source": "terms.md"}}]))
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cases = [
        ((str(queries),), "rows are not LangChain Documents"),
        ((str(no_text),), "row 1 has no text (page_content)"),
        (("--chroma", str(tmp_path / "missing"), "--collection", "x"), "not a folder, nor"),
        (("--chroma", f"127.0.0.1:{port}", "--collection", "x"), "cannot reach a Chroma server"),
    ]
    for argv, message in cases:
        code, out, err = _cli(
            capsys, "import-chunks", *argv, "--docs", str(terms), "--store", str(store)
        )
        assert code == 2 and message in err, (argv, err)
        assert err.count("\n") == 1 and not out
    assert not (store / "chunksets").exists()


def test_bench_case_anchors_another_extractors_chunks_of_a_filing() -> None:
    from core.bench.import_cases import MIN_PLACED, filing_paths, foreign_chunks
    from core.imported.anchor import anchor_document

    path = next(p for p in filing_paths(quick=False) if p.name.startswith("Pfizer"))
    doc = load_document(path)
    chunks = foreign_chunks(path)
    anchors = anchor_document(doc, chunks)
    placed = [a for a in anchors if a.anchor in ("exact", "aligned")]
    assert len(placed) >= MIN_PLACED * len(chunks)
    for chunk, anchor in zip(chunks, anchors, strict=True):
        if anchor.char_start is not None:
            assert chunk.page in anchor.pages
            assert doc.text[anchor.char_start : anchor.char_end].strip()


def test_a_malformed_server_setting_stops_only_commands_that_open_the_store(
    terms: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHUNKSCOPE_CHROMA", "not-a-host")  # the chunk sets are not read then
    assert main(["parse", str(terms)]) == 0
    rows = terms.with_suffix(".jsonl")
    rows.write_bytes(jsonl(langchain_rows(terms)))
    code, _, err = _cli(capsys, "import-chunks", str(rows), "--docs", str(terms))
    assert code == 2 and "expected HOST:PORT" in err


def test_an_aligned_chunk_at_its_claimed_offset_is_not_wrong(terms: Path) -> None:
    """A chunk whose spacing differs from our text (aligned), claiming the offset where its
    span starts: the claim holds; never "wrong: claims 0, text is at 0"."""
    doc = load_document(terms)
    rows = langchain_rows(terms)
    rows[0]["page_content"] = rows[0]["page_content"].replace(" ", "  ", 3)  # respaced
    assert rows[0]["metadata"]["start_index"] == 0
    chunk_set = run_import(rows, [doc])
    first = chunk_set.chunks[0].anchor
    assert (first.anchor, first.char_start) == ("aligned", 0), first
    assert first.claim == "ok", first.detail
    assert "claims 0, text is at 0" not in first.detail
