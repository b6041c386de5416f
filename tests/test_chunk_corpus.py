"""Every policy on every openable file of the shared corpus keeps every chunk invariant.

Documents are loaded and parsed once per module (the fast parser). The invariants are
``test_chunk.assert_chunk_invariants``: exact slices, sorted, covering (structure: all
but page headers/footers), sizes or ``oversize``, unique and stable ids, pages and
heading paths consistent with the blocks.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from conftest import PDF_PASSWORDS, openable_pdfs, text_corpora
from test_chunk import assert_chunk_invariants

from core.chunk import chunk_document, default_policy
from core.chunk import policy_registry as registry
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.types import Block, ChunkPolicy, Document

POLICIES = [
    *(default_policy(name) for name in registry.policy_names()),
    ChunkPolicy(name="fixed", size=300, overlap=0, unit="chars"),
    ChunkPolicy(name="fixed", size=200, overlap=40, unit="tokens"),
    ChunkPolicy(name="sentence", size=3, overlap=0, unit="sentences"),
    ChunkPolicy(name="structure", size=1000, overlap=100, unit="chars"),
    ChunkPolicy(name="structure", size=96, overlap=0, unit="tokens"),
]
FILES = [*openable_pdfs(), *text_corpora()]


@functools.cache
def parsed(path: Path) -> tuple[Document, tuple[Block, ...]]:
    doc = load_document(path, password=PDF_PASSWORDS.get(path.name))
    return doc, parse_document(doc).blocks


def test_the_corpus_is_there() -> None:
    assert len(openable_pdfs()) >= 15 and len(text_corpora()) == 5


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.key)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_invariants_on_corpus(path: Path, policy: ChunkPolicy) -> None:
    doc, blocks = parsed(path)
    tokenizer = load_tokenizer()
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    if doc.text.strip():
        assert chunks
    for chunk in chunks:  # pages agree with the pages' own character ranges
        spanned = {
            p.number
            for p in doc.pages
            if p.char_start < chunk.char_end and p.char_end > chunk.char_start
        }
        assert set(chunk.pages) <= spanned
    again = chunk_document(doc, list(blocks), policy, tokenizer)
    assert [c.chunk_id for c in again] == [c.chunk_id for c in chunks]


def test_structure_chunks_start_at_headings_on_a_paper() -> None:
    doc, blocks = parsed(next(p for p in FILES if p.name == "sample-sigconf.pdf"))
    chunks = chunk_document(doc, blocks, default_policy("structure"), load_tokenizer())
    starts = {c.char_start for c in chunks}
    content = [b for b in blocks if b.kind not in ("header", "footer")]
    checked = 0
    for before, heading in zip([None, *content], content, strict=False):
        if heading.kind == "heading" and (before is None or before.kind != "heading"):
            assert heading.char_start in starts, heading.text
            checked += 1
    assert checked >= 5
    with_path = [c for c in chunks if c.heading_path]
    assert len(with_path) >= len(chunks) // 2
