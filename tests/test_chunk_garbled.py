"""``skip_garbled``: a policy leaves blocks flagged garbled out of every chunk.

Under every policy that takes the option, on real PDFs with glyph soup: without it the
garbled text is in some chunk (flagged ``garbled``); with it, in none, while every other
guarantee (exact slices, coverage of everything else) holds.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import PDF_DIR, need_corpus
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunk import assert_chunk_invariants

from core.chunk import _overlapping, chunk_document, policy_from_args
from core.chunk import policy_registry as registry
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.types import ChunkPolicy

SKIPPING = [s.name for s in registry.all_policies() if "skip_garbled" in s.options]
# The pdf.js test paper (Gal et al., PLDI 2009): the labels of its Figure 12 chart on
# p. 13 come out of a custom-encoded font as glyph soup.
TRACEMONKEY = "tracemonkey-pldi-09.pdf"
FIGURE_12_SOUP = ".><57=+?=>/B/+.><=#0$1D23#"
FILES = ["elstest-5p.pdf", TRACEMONKEY]  # formulas read as unmapped glyphs; the soup


@cache
def _parsed(name: str):
    path = need_corpus(PDF_DIR / name)  # the pdf.js paper is not in every copy: skipped
    doc = load_document(Path(path))
    return doc, parse_document(doc).blocks


@pytest.mark.parametrize("name", SKIPPING)
@pytest.mark.parametrize("file", FILES)
def test_garbled_blocks_are_in_no_chunk_with_the_option(file: str, name: str) -> None:
    doc, blocks = _parsed(file)
    garbled = [(b.char_start, b.char_end) for b in blocks if b.garbled]
    assert garbled, f"{file} has garbled blocks"
    tokenizer = load_tokenizer()

    def touching(chunks) -> list:
        return [c for c in chunks if any(a < c.char_end and c.char_start < b for a, b in garbled)]

    plain = chunk_document(doc, blocks, policy_from_args(name), tokenizer)
    assert touching(plain) and all(c.garbled for c in touching(plain))
    policy = policy_from_args(name, skip_garbled=True)
    assert policy.key.endswith("-ng") and policy.to_dict()["skip_garbled"] is True
    skipped = chunk_document(doc, blocks, policy, tokenizer)
    assert skipped and not touching(skipped) and not any(c.garbled for c in skipped)
    assert_chunk_invariants(doc, blocks, policy, skipped, tokenizer)  # the rest is covered
    if file == TRACEMONKEY:
        assert any(FIGURE_12_SOUP in c.text for c in plain)
        assert not any(FIGURE_12_SOUP in c.text for c in skipped)


@pytest.mark.parametrize("name", SKIPPING)
def test_a_document_of_garbled_blocks_only_has_no_chunk_with_the_option(name: str) -> None:
    doc, blocks = _parsed("pypdfsf_habibi-rotated.pdf")  # every block unmapped glyphs
    assert blocks and all(b.garbled for b in blocks)
    assert chunk_document(doc, blocks, policy_from_args(name))
    assert chunk_document(doc, blocks, policy_from_args(name, skip_garbled=True)) == []


def test_the_option_is_refused_where_a_policy_does_not_take_it() -> None:
    from core.chunk.fixed import fixed_pieces

    bare = registry.PolicySpec(
        name="bare", summary="fixed windows, no options", sizes={"chars": (100, 0)},
        unit="chars", pieces=fixed_pieces,
    )  # fmt: skip
    with registry.registered(bare):
        with pytest.raises(registry.PolicyError, match="--skip-garbled works with the fixed"):
            policy_from_args("bare", skip_garbled=True)
        with pytest.raises(ValueError, match="does not take --skip-garbled"):
            registry.check_policy(ChunkPolicy(name="bare", size=9, skip_garbled=True))
    assert set(SKIPPING) >= {"fixed", "sentence", "structure"}


_SPAN = st.tuples(st.integers(0, 200), st.integers(0, 40)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_SPAN, min_size=1, max_size=30), st.lists(_SPAN, max_size=12))
def test_a_chunk_is_flagged_exactly_when_it_shares_a_character_with_a_garbled_block(
    chunks: list[tuple[int, int]], garbled: list[tuple[int, int]]
) -> None:
    """The flag is computed for all chunks at once (one search); it says what the pairwise
    test says, for spans in any order, overlapping or empty."""
    starts = np.array([a for a, _ in chunks], dtype=np.int64)
    ends = np.array([b for _, b in chunks], dtype=np.int64)
    expected = [any(a < end and start < b for a, b in garbled) for start, end in chunks]
    assert _overlapping(starts, ends, garbled) == expected
