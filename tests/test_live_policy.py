"""Live policies: the user's own splitter (LangChain, LlamaIndex, chonkie, a ``py:``
factory) run on the canonical text, its pieces anchored exactly (``core.imported.live``).

What a user sees: the chunks are the pieces the splitter returns on the same text, in
order, each at offsets where ``doc.text[start:end]`` is the piece (or, for a splitter that
rewrites its text, the piece's words); the errors are one line naming the splitter.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import core.imported  # noqa: F401  (registers the langchain:, llamaindex:, chonkie:, py: kinds)
from core.chunk import PolicyError, chunk_document, policy_from_args
from core.chunk import policy_registry as registry
from core.chunk.live_names import split_names
from core.cli import main
from core.formats import load_document, parse_document
from core.imported.live import anchor_counts
from core.store.chroma import ChunkStore
from tests.live_splitters import paragraphs

ROOT = Path(__file__).resolve().parents[1]
SOTU = ROOT / "sample_docs" / "state_of_the_union.md"
PDF = ROOT / "sample_docs" / "sample-sigconf.pdf"


@pytest.fixture(autouse=True)
def forget_live_policies() -> Iterator[None]:
    """Each test resolves its own names; none stays registered for the next."""
    yield
    for name in registry.policy_names():
        if registry.get(name).live:
            registry.unregister(name)


def _chunks(path: Path, name: str, size: int, overlap: int, **params: object):
    doc = load_document(path)
    policy = policy_from_args(name, size, overlap, params=params or None)
    return doc, policy, chunk_document(doc, parse_document(doc).blocks, policy)


def test_a_langchain_splitter_gives_its_own_pieces_at_exact_offsets() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    doc, policy, chunks = _chunks(SOTU, "langchain:RecursiveCharacterTextSplitter", 300, 60)
    pieces = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=60).split_text(doc.text)
    assert len(pieces) > 20
    assert [c.text for c in chunks] == pieces
    for chunk in chunks:
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
    pairs = zip(chunks, chunks[1:], strict=False)
    assert any(b.char_start < a.char_end for a, b in pairs)  # the overlap holds
    placed = anchor_counts(doc, policy)
    assert placed is not None and placed.exact == len(pieces) and placed.unplaced == 0
    assert policy.unit == "chars" and policy.key.startswith("langchain:Recursive")


def test_a_llamaindex_splitter_gives_its_own_pieces() -> None:
    node_parser = pytest.importorskip("llama_index.core.node_parser")
    doc, _, chunks = _chunks(SOTU, "llamaindex:SentenceSplitter", 120, 20)
    pieces = node_parser.SentenceSplitter(chunk_size=120, chunk_overlap=20).split_text(doc.text)
    assert [c.text for c in chunks] == [p.strip() for p in pieces]
    assert all(doc.text[c.char_start : c.char_end] == c.text for c in chunks)
    assert chunks[0].policy.unit == "tokens"  # LlamaIndex counts its own tokens


def test_a_chonkie_chunker_gives_its_own_pieces() -> None:
    chonkie = pytest.importorskip("chonkie")
    doc, _, chunks = _chunks(SOTU, "chonkie:RecursiveChunker", 400, 0)
    pieces = [c.text.strip() for c in chonkie.RecursiveChunker(chunk_size=400).chunk(doc.text)]
    assert [c.text for c in chunks] == [p for p in pieces if p]
    assert all(doc.text[c.char_start : c.char_end] == c.text for c in chunks)


def test_a_py_factory_that_rewrites_its_text_is_aligned_and_says_so() -> None:
    name = "py:tests.live_splitters:paragraphs"
    doc, policy, chunks = _chunks(SOTU, name, 500, 50, drop="the")
    pieces = paragraphs(500, 50, drop="the").split_text(doc.text)
    placed = anchor_counts(doc, policy)
    assert placed is not None and placed.aligned > 0
    assert f"{placed.aligned} aligned (the splitter rewrote their text" in placed.line()
    # a piece placed nowhere (too short to tell where) is in no chunk, and counted so
    assert placed.pieces == len(pieces) and placed.exact + placed.aligned == len(chunks)
    assert placed.unplaced == len(pieces) - len(chunks) <= 2
    unmatched = 0
    for chunk in chunks:
        # the chunk holds the canonical span that (at the anchor's threshold, 90%) a
        # piece's words lie in
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
        held = set(chunk.text.split())
        unmatched += not any(
            sum(w in held for w in piece.split()) >= 0.9 * len(piece.split()) for piece in pieces
        )
    assert unmatched <= 2  # a short rewritten piece may match a longer span's words
    assert policy.name == "py:tests.live_splitters:paragraphs(drop='the')"


def test_a_callable_from_a_factory_and_the_unit_it_states() -> None:
    doc, policy, chunks = _chunks(SOTU, "py:tests.live_splitters:lines", 5, 1)
    assert policy.unit == "sentences"
    expected = [line.strip() for line in doc.text.splitlines() if line.strip()]
    assert [c.text for c in chunks] == expected


def test_per_page_runs_the_splitter_on_each_page() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    doc, policy, chunks = _chunks(PDF, "langchain:RecursiveCharacterTextSplitter", 400, 0,
                                  per_page=True)  # fmt: skip
    assert "per_page=True" in policy.key
    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=0)
    expected = []
    for page in doc.pages:
        expected += splitter.split_text(doc.text[page.char_start : page.char_end])
    assert [c.text for c in chunks] == expected
    assert all(len(c.pages) == 1 for c in chunks)  # no chunk runs across a page break
    whole = _chunks(PDF, "langchain:RecursiveCharacterTextSplitter", 400, 0)[2]
    assert any(len(c.pages) > 1 for c in whole)  # on the whole text, some do


def test_the_cli_chunks_with_a_live_policy_and_its_params(capsys) -> None:
    args = ["chunk", str(SOTU), "--policy", "py:tests.live_splitters:paragraphs",
            "--size", "400", "--overlap", "0", "--param", "joiner=' '"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "under py:tests.live_splitters:paragraphs(joiner=' ')-chars-400-0" in out
    assert "pieces from the splitter:" in out and "aligned" in out


@pytest.mark.parametrize(
    ("policy", "extra", "said"),
    [
        ("langchain:NoSuchSplitter", [], "langchain_text_splitters has no splitter 'NoSuch"),
        ("py:tests.live_splitters:raising", [],
         "py:tests.live_splitters:raising raised RuntimeError: the splitter broke"),
        ("py:tests.no_such_module:f", [], "cannot import tests.no_such_module"),
        ("chonkie:RecursiveChunker", ["--overlap", "10"], "takes no chunk_overlap"),
        ("langchain:MarkdownHeaderTextSplitter", [], "takes no chunk_size: import its chunks"),
        ("nokind:Thing", [], "unknown kind of splitter 'nokind:'"),
        ("fixed", ["--param", "a=1"], "not the fixed policy"),
    ],
)  # fmt: skip
def test_errors_are_one_line_naming_the_splitter(capsys, policy, extra, said) -> None:
    assert main(["chunk", str(SOTU), "--policy", policy, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1


def test_a_missing_library_is_one_line_saying_what_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "langchain_text_splitters", None)  # import fails
    assert main(["chunk", str(SOTU), "--policy", "langchain:RecursiveCharacterTextSplitter"]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install langchain-text-splitters" in err and len(err.splitlines()) == 1


def test_live_names_are_canonical_and_checked() -> None:
    a = policy_from_args("py:tests.live_splitters:paragraphs( joiner = ' ' )", 300, 0)
    b = policy_from_args("py:tests.live_splitters:paragraphs", 300, 0, params={"joiner": " "})
    assert a == b
    with pytest.raises(PolicyError, match="not key=value"):
        policy_from_args("py:tests.live_splitters:paragraphs(1, 2)", 300, 0)


def test_a_live_policy_has_a_valid_store_collection_name() -> None:
    policy = policy_from_args("py:tests.live_splitters:paragraphs", 300, 0, params={"joiner": " "})
    name = ChunkStore.collection_name("all-MiniLM-L6-v2", "naive", policy)
    assert all(ch.isalnum() or ch in "-_" for ch in name) and len(name) <= 512
    other = policy_from_args("py:tests.live_splitters:paragraphs", 300, 0, params={"joiner": "_"})
    assert ChunkStore.collection_name("all-MiniLM-L6-v2", "naive", other) != name


def test_a_comma_list_keeps_a_splitters_parameters_whole() -> None:
    assert split_names("structure, py:m:f(a=1, b=[2, 3]),fixed") == [
        "structure", "py:m:f(a=1, b=[2, 3])", "fixed",
    ]  # fmt: skip
