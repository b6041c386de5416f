"""Chunk policies on hand-made documents, and the invariant checker the other chunk
tests share (``assert_chunk_invariants``)."""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pytest

from core.chunk import (
    PolicyError,
    chunk_document,
    chunk_stats,
    default_policy,
    policy_from_args,
)
from core.chunk import (
    policy_registry as registry,
)
from core.model.tokens import Tokenizer, load_tokenizer
from core.provenance.types import Block, Chunk, ChunkPolicy, Document, make_chunk_id


# -- shared invariant checker ---------------------------------------------------------------
def assert_chunk_invariants(
    doc: Document,
    blocks: Sequence[Block],
    policy: ChunkPolicy,
    chunks: Sequence[Chunk],
    tokenizer: Tokenizer,
) -> None:
    """Every guarantee of ``core.chunk`` on one chunking (see its module doc)."""
    text = doc.text
    owners = _owners(len(text), blocks)
    excluded = _excluded_mask(len(text), blocks, policy)
    previous: tuple[int, int] | None = None
    for chunk in chunks:
        span = (chunk.char_start, chunk.char_end)
        assert 0 <= chunk.char_start < chunk.char_end <= len(text), span
        assert chunk.text == text[chunk.char_start : chunk.char_end]
        assert not chunk.text[0].isspace() and not chunk.text[-1].isspace(), span
        assert (chunk.doc_id, chunk.doc_sha256, chunk.policy) == (doc.doc_id, doc.sha256, policy)
        assert chunk.chunk_id == make_chunk_id(doc.doc_id, doc.sha256, policy, *span)
        assert previous is None or span > previous, (previous, span)
        previous = span
        assert chunk.pages == doc.pages_of(*span)
        held = np.unique(owners[chunk.char_start : chunk.char_end])
        assert chunk.block_kinds == tuple(sorted({blocks[i].kind for i in held if i >= 0}))
        assert chunk.token_count == tokenizer.count(chunk.text), span
        _assert_size(policy, chunk)
        _assert_heading_path(blocks, owners, policy, chunk)
        if excluded is not None:
            assert not excluded[chunk.char_start : chunk.char_end].any(), span
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    _assert_coverage(text, chunks, excluded)


def _owners(length: int, blocks: Sequence[Block]) -> np.ndarray:
    """Per character: the index (in ``blocks``) of the block holding it, else -1."""
    owners = np.full(length, -1, dtype=np.int64)
    for i, block in enumerate(blocks):
        owners[block.char_start : block.char_end] = i
    return owners


def _assert_size(policy: ChunkPolicy, chunk: Chunk) -> None:
    if policy.unit == "sentences":
        assert not chunk.oversize
        return
    size = len(chunk.text) if policy.unit == "chars" else chunk.token_count
    if chunk.oversize:
        assert size > policy.size, (chunk.char_start, size)
    else:
        assert size <= policy.size, (chunk.char_start, size, chunk.text[:80])


def _block_at(blocks: Sequence[Block], owners: np.ndarray, position: int) -> Block | None:
    """The block holding ``position``, else the last one that starts before it."""
    if owners[position] >= 0:
        return blocks[int(owners[position])]
    ordered = sorted(blocks, key=lambda b: (b.char_start, b.char_end))
    index = bisect.bisect_right([b.char_start for b in ordered], position) - 1
    return ordered[index] if index >= 0 else None


def _assert_heading_path(
    blocks: Sequence[Block], owners: np.ndarray, policy: ChunkPolicy, chunk: Chunk
) -> None:
    at_start = _block_at(blocks, owners, chunk.char_start)
    own = at_start.heading_path if at_start is not None else ()
    if policy.name != "structure":
        assert chunk.heading_path == own, (chunk.char_start, chunk.heading_path, own)
        return
    if chunk.heading_path == own:
        return
    headings = [
        b.heading_path for b in blocks if b.kind == "heading" and b.char_start < chunk.char_end
    ]
    assert chunk.heading_path in headings, chunk.heading_path
    opens_heading = at_start is not None and at_start.kind == "heading"
    if opens_heading and not at_start.text[: chunk.char_start - at_start.char_start].strip():
        inside = [
            b.heading_path
            for b in blocks
            if b.kind == "heading" and chunk.char_start <= b.char_start < chunk.char_end
        ]
        assert chunk.heading_path in inside


def _excluded_mask(length: int, blocks: Sequence[Block], policy: ChunkPolicy) -> np.ndarray:
    """Per character: whether the policy leaves it out (its spec's ``leaves_out`` kinds,
    and garbled blocks under ``skip_garbled``)."""
    leaves_out = registry.get(policy.name).leaves_out
    mask = np.zeros(length, dtype=bool)
    for block in blocks:
        if block.kind in leaves_out or (policy.skip_garbled and block.garbled):
            mask[block.char_start : block.char_end] = True
    return mask


def _assert_coverage(text: str, chunks: Sequence[Chunk], excluded: np.ndarray | None) -> None:
    covered = np.zeros(len(text), dtype=bool)
    for chunk in chunks:
        covered[chunk.char_start : chunk.char_end] = True
    missing = [
        i
        for i in np.flatnonzero(~covered)
        if not text[i].isspace() and (excluded is None or not excluded[i])
    ]
    assert not missing, (
        f"{len(missing)} chars uncovered, first at {missing[0]}: {text[missing[0]]!r}"
    )


# -- documents built by hand ----------------------------------------------------------------
def make_doc(text: str, doc_id: str = "hand") -> Document:
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Document(
        doc_id=doc_id,
        sha256=sha,
        source=f"{doc_id}.md",
        kind="markdown",
        text=text,
        title=doc_id,
    )


def markdown_blocks(doc: Document) -> list[Block]:
    """Blocks of a small Markdown document: headings, lists, tables, paragraphs."""
    blocks: list[Block] = []
    path: list[str] = []
    for match in re.finditer(r"(?:[^\n]+\n?)+", doc.text):
        start, end = match.start(), match.end()
        while end > start and doc.text[end - 1] == "\n":
            end -= 1
        body = doc.text[start:end]
        level = len(body) - len(body.lstrip("#")) if body.startswith("#") else 0
        kind = "heading" if level else "paragraph"
        if body.startswith(("- ", "* ", "1. ")):
            kind = "list"
        elif body.count("|") >= 2:
            kind = "table"
        elif body.startswith("RUNNING HEADER"):
            kind = "header"
        if level:
            path[:] = [*path[: level - 1], body.lstrip("#").strip()]
        heading_path = tuple(path) if kind != "header" else ()
        blocks.append(
            Block(
                doc_id=doc.doc_id,
                doc_sha256=doc.sha256,
                kind=kind,  # type: ignore[arg-type]
                char_start=start,
                char_end=end,
                text=body,
                page=0,
                bbox_pt=None,
                heading_path=heading_path,
                level=level,
            )
        )
    return blocks


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return load_tokenizer()


GUIDE = """# Guide

Chunkscope shows where chunks come from. It keeps offsets exact.

## Install

- run make test once
- run make run to start
- read the README first

The cache is always rebuilt on start. However, a changed model keeps the old vectors.

RUNNING HEADER page 2

## Data

| name | size |
| GeoTopo | 117 pages |

The corpus has many documents. Each one is read once. Spans index the canonical text. \
Pages are one-based everywhere. Boxes use PDF points. The origin is the top left corner. \
Tokens come from the model tokenizer. Sentences come from a rule-based splitter.
"""


def _structure(size: int, overlap: int, unit: str = "chars") -> ChunkPolicy:
    return ChunkPolicy(name="structure", size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]


def test_structure_heading_starts_chunk_and_list_stays_whole(tokenizer: Tokenizer) -> None:
    doc = make_doc(GUIDE)
    blocks = markdown_blocks(doc)
    policy = _structure(160, 40)
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    starts = {c.char_start for c in chunks}
    for block in blocks:
        if block.kind == "heading":
            assert block.char_start in starts, block.text
    (listing,) = [b for b in blocks if b.kind == "list"]
    holding = [c for c in chunks if c.char_start <= listing.char_start < c.char_end]
    assert len(holding) == 1 and holding[0].char_end >= listing.char_end
    install = [c for c in chunks if "make test" in c.text][0]
    assert install.heading_path == ("Guide", "Install")
    assert install.text.startswith("## Install")


def test_structure_leaves_out_running_headers(tokenizer: Tokenizer) -> None:
    doc = make_doc(GUIDE)
    blocks = markdown_blocks(doc)
    (header,) = [b for b in blocks if b.kind == "header"]
    for policy in (_structure(160, 40), _structure(2000, 0), _structure(60, 20, "tokens")):
        chunks = chunk_document(doc, blocks, policy, tokenizer)
        assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
        assert all("RUNNING HEADER" not in c.text for c in chunks)
        assert all(
            c.char_end <= header.char_start or c.char_start >= header.char_end for c in chunks
        )
    fixed = chunk_document(doc, blocks, default_policy("fixed"), tokenizer)
    assert any("RUNNING HEADER" in c.text for c in fixed)


def test_structure_splits_large_block_at_sentences_with_one_sentence_overlap(
    tokenizer: Tokenizer,
) -> None:
    doc = make_doc(GUIDE)
    blocks = markdown_blocks(doc)
    (long_block,) = [b for b in blocks if b.text.startswith("The corpus")]
    from core.chunk import sentence_spans

    sentences = [
        (long_block.char_start + s, long_block.char_start + e)
        for s, e in sentence_spans(long_block.text)
    ]
    assert len(sentences) == 8
    policy = _structure(120, 45)
    chunks = [
        c
        for c in chunk_document(doc, blocks, policy, tokenizer)
        if c.char_start >= long_block.char_start
    ]
    assert len(chunks) >= 3
    starts = {s for s, _ in sentences}
    ends = {e for _, e in sentences}
    for chunk in chunks:
        assert chunk.char_start in starts and chunk.char_end in ends
        assert len(chunk.text) <= 120 and not chunk.oversize
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = [s for s in sentences if after.char_start <= s[0] and s[1] <= before.char_end]
        last = next(s for s in sentences if s[1] == before.char_end)
        if last[1] - last[0] <= 45:
            assert shared == [last]  # the last sentence opens the next chunk
        else:
            assert shared == []


def test_structure_keeps_claim_with_qualifier(tokenizer: Tokenizer) -> None:
    claim = "The cache is always rebuilt on start."
    qualifier = "However, a changed model keeps the old vectors."
    text = "Intro sentence number one is here. " + claim + " " + qualifier
    doc = make_doc(text)
    blocks = markdown_blocks(doc)
    size = len(claim + " " + qualifier) + 2  # the pair fits, all three do not
    policy = _structure(size, 0)
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    assert [c.text for c in chunks] == [
        "Intro sentence number one is here.",
        claim + " " + qualifier,
    ]
    # Without the qualifier the greedy packing would have ended the chunk after the claim.
    plain = make_doc(text.replace("However, a", "A"))
    plain_chunks = chunk_document(plain, markdown_blocks(plain), policy, tokenizer)
    assert plain_chunks[0].text.endswith(claim)


def test_structure_cuts_a_sentence_only_when_it_alone_is_too_large(tokenizer: Tokenizer) -> None:
    sentence = " ".join(f"word{i}" for i in range(60)) + "."
    doc = make_doc("Short one. " + sentence + " Short two.")
    blocks = markdown_blocks(doc)
    for policy in (_structure(100, 20), _structure(30, 5, "tokens")):
        chunks = chunk_document(doc, blocks, policy, tokenizer)
        assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
        assert not any(c.oversize for c in chunks)
        inside = [c for c in chunks if "word30" in c.text or "word0 " in c.text]
        assert all(re.fullmatch(r"(word\d+ ?)+\.?", c.text) for c in inside)  # cut at spaces
    assert chunks[0].text == "Short one."


def test_oversize_only_for_uncuttable_units(tokenizer: Tokenizer) -> None:
    doc = make_doc("e\u0301 a\U0001f468\u200d\U0001f469\u200d\U0001f467 b")
    for policy in (
        ChunkPolicy(name="fixed", size=1, overlap=0, unit="chars"),
        _structure(1, 0),
    ):
        chunks = chunk_document(doc, [], policy, tokenizer)
        assert_chunk_invariants(doc, [], policy, chunks, tokenizer)
        assert [c.text for c in chunks if c.oversize] == [
            "e\u0301",
            "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        ]


def test_fixed_chars_windows_and_overlap(tokenizer: Tokenizer) -> None:
    doc = make_doc("aaaa bbbb cccc")
    plain = ChunkPolicy(name="fixed", size=5, overlap=0, unit="chars")
    assert [c.text for c in chunk_document(doc, [], plain, tokenizer)] == ["aaaa", "bbbb", "cccc"]
    shared = ChunkPolicy(name="fixed", size=6, overlap=2, unit="chars")
    chunks = chunk_document(doc, [], shared, tokenizer)
    assert [c.text for c in chunks] == ["aaaa b", "bbbb c", "cccc"]  # 2 back, past the space
    assert_chunk_invariants(doc, [], shared, chunks, tokenizer)


def test_fixed_tokens_edges_are_token_edges(tokenizer: Tokenizer) -> None:
    text = "Tokenization of unbelievably long words, e.g. internationalization, works. " * 4
    doc = make_doc(text.strip())
    spans = tokenizer.token_spans(doc.text)
    starts = {s for s, _ in spans}
    ends = {e for _, e in spans}
    policy = ChunkPolicy(name="fixed", size=7, overlap=2, unit="tokens")
    chunks = chunk_document(doc, [], policy, tokenizer)
    assert_chunk_invariants(doc, [], policy, chunks, tokenizer)
    for chunk in chunks:
        assert chunk.char_start in starts and chunk.char_end in ends
        assert chunk.token_count <= 7


def test_sentence_windows(tokenizer: Tokenizer) -> None:
    doc = make_doc("One is here. Two is here. Three is here. Four is here. Five is here.")
    policy = ChunkPolicy(name="sentence", size=2, overlap=1, unit="sentences")
    chunks = chunk_document(doc, [], policy, tokenizer)
    assert [c.text for c in chunks] == [
        "One is here. Two is here.",
        "Two is here. Three is here.",
        "Three is here. Four is here.",
        "Four is here. Five is here.",
    ]
    assert_chunk_invariants(doc, [], policy, chunks, tokenizer)


def test_ids_are_stable_and_cache_gives_equal_chunks(tokenizer: Tokenizer) -> None:
    doc = make_doc(GUIDE)
    twin = make_doc(GUIDE)  # equal content, another object
    blocks = markdown_blocks(doc)
    for policy in map(default_policy, registry.policy_names()):
        first = chunk_document(doc, blocks, policy, tokenizer)
        assert chunk_document(doc, blocks, policy, tokenizer) == first
        assert chunk_document(twin, list(blocks), policy, tokenizer) == first


def test_blocks_of_another_document_are_refused(tokenizer: Tokenizer) -> None:
    doc = make_doc(GUIDE)
    other = make_doc(GUIDE + " more", doc_id="other")
    with pytest.raises(ValueError, match="does not belong"):
        chunk_document(doc, markdown_blocks(other), default_policy("structure"), tokenizer)


def test_policy_from_args_defaults_and_errors() -> None:
    assert policy_from_args("fixed", None, None, None) == default_policy("fixed")
    assert default_policy("fixed").key == "fixed-chars-800-100"
    assert default_policy("sentence").key == "sentence-sentences-5-1"
    assert default_policy("structure").key == "structure-tokens-240-24"
    assert policy_from_args("fixed", None, None, "tokens").key == "fixed-tokens-200-40"
    assert policy_from_args("structure", None, None, "chars").key == "structure-chars-1000-100"
    assert policy_from_args("fixed", 400, None, None).overlap == 50
    assert policy_from_args("sentence", 3, None, None).overlap == 0
    assert policy_from_args("fixed", 10, 0, "chars").overlap == 0
    for bad in (
        ("sentence", None, None, "chars"),
        ("fixed", None, None, "sentences"),
        ("fixed", 0, None, None),
        ("fixed", 10, 10, None),
        ("fixed", 10, -1, None),
        ("paragraph", None, None, None),
    ):
        with pytest.raises(PolicyError):
            policy_from_args(*bad)


def test_chunk_stats_counts(tokenizer: Tokenizer) -> None:
    doc = make_doc(GUIDE)
    blocks = markdown_blocks(doc)
    fixed = ChunkPolicy(name="fixed", size=100, overlap=20, unit="chars")
    chunks = chunk_document(doc, blocks, fixed, tokenizer)
    stats = chunk_stats(doc, chunks, blocks, tokenizer, max_tokens=20)
    assert stats.n_chunks == len(chunks)
    assert stats.token_counts == tuple(c.token_count for c in chunks)
    assert stats.n_over_window == sum(c.token_count > 20 for c in chunks)
    assert stats.coverage_share == 1.0
    assert 0.1 < stats.overlap_share < 0.3
    assert stats.duplicate_share == 0.0
    assert stats.n_crossing_heading >= 1 and stats.n_splitting_sentence >= 1
    assert stats.n_crossing_page == 0  # reflowable text has no pages
    structure = chunk_document(doc, blocks, _structure(160, 0), tokenizer)
    clean = chunk_stats(doc, structure, blocks, tokenizer, max_tokens=256)
    assert clean.n_splitting_sentence == 0 and clean.n_crossing_heading == 0
    assert clean.overlap_share == 0.0 and clean.n_over_window == 0
    assert clean.coverage_share < 1.0  # the running header is left out
    assert set(stats.to_dict()) >= {"n_chunks", "share_over_window", "duplicate_share"}


# -- sentence splitter ------------------------------------------------------------------------
def _sentences(text: str) -> list[str]:
    from core.chunk import sentence_spans

    return [text[a:b] for a, b in sentence_spans(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        ("Use e.g. a dict, i.e. a map. Done.", ["Use e.g. a dict, i.e. a map.", "Done."]),
        ("See Fig. 3 and Eq. 2 for details. Next.", ["See Fig. 3 and Eq. 2 for details.", "Next."]),
        (
            "Pi is 3.14 and e is 2.718. Both are real.",
            ["Pi is 3.14 and e is 2.718.", "Both are real."],
        ),
        (
            "The U.S. Army won. The U.S. It rained.",
            ["The U.S. Army won.", "The U.S.", "It rained."],
        ),
        (
            "J. R. R. Tolkien wrote it. Then he rested.",
            ["J. R. R. Tolkien wrote it.", "Then he rested."],
        ),
        ("Wait... what? Fine… It works.", ["Wait... what?", "Fine…", "It works."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("(It was late.) We went home!", ["(It was late.)", "We went home!"]),
        ("Really?! Yes.", ["Really?!", "Yes."]),
        (
            "First paragraph without stop\n\nSecond one",
            ["First paragraph without stop", "Second one"],
        ),
        ("One\r\n\r\nTwo\rstill two", ["One", "Two\rstill two"]),
        ("# Title\nBody text here.", ["# Title", "Body text here."]),
        ("Introduction\nThe study begins.", ["Introduction", "The study begins."]),
        ("2.1 Methods\nWe measured it.", ["2.1 Methods", "We measured it."]),
        ("Items:\n- one\n- two\n1. three", ["Items:", "- one", "- two", "1. three"]),
        ("a | b | c\n1 | 2 | 3", ["a | b | c", "1 | 2 | 3"]),
        (
            "it rose in 2019. the rest fell. 14. debt rose",
            ["it rose in 2019.", "the rest fell.", "14. debt rose"],
        ),
        ("Contents . . . . . 3\nMore", ["Contents . . . . . 3", "More"]),
        ("a line that wraps\nonto the next line.", ["a line that wraps\nonto the next line."]),
        ("Ends with etc. and more. Next", ["Ends with etc. and more.", "Next"]),
        (
            "\u0645\u0631\u062d\u0628\u0627. \u05e9\u05dc\u05d5\u05dd.",
            ["\u0645\u0631\u062d\u0628\u0627.", "\u05e9\u05dc\u05d5\u05dd."],
        ),
        ("", []),
        (" \n\t ", []),
    ],
)
def test_sentence_splitter(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected


def test_sentence_spans_partition_the_content_and_honour_hard_breaks() -> None:
    from core.chunk import sentence_spans

    text = "Alpha beta gamma delta. Epsilon zeta eta."
    assert sentence_spans(text, hard_breaks=[11]) == [(0, 10), (11, 23), (24, 41)]
    content = [i for i, c in enumerate(GUIDE) if not c.isspace()]
    held = [i for a, b in sentence_spans(GUIDE) for i in range(a, b) if not GUIDE[i].isspace()]
    assert held == content


def test_structure_on_blocks_of_the_markdown_parser(tokenizer: Tokenizer) -> None:
    from core.formats import load_document, parse_document

    doc = load_document(GUIDE.encode(), name="guide.md")
    blocks = parse_document(doc).blocks
    policy = _structure(160, 40)
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    starts = {c.char_start for c in chunks}
    assert all(b.char_start in starts for b in blocks if b.kind == "heading")
    (listing,) = [b for b in blocks if b.kind == "list"]
    assert any(
        c.char_start <= listing.char_start and listing.char_end <= c.char_end for c in chunks
    )
    assert [c.heading_path for c in chunks if "make test" in c.text] == [("Guide", "Install")]
    spans = [c for c in chunks if "Spans index" in c.text]
    assert len(spans) == 2  # the sentence that closes one chunk opens the next


def _paged(char_page: list[int]) -> Document:
    text = "".join("x" if p else "\n" for p in char_page)
    boxes = np.zeros((len(text), 4), dtype=np.float32)
    return Document(
        doc_id="paged",
        sha256="0" * 64,
        source="paged",
        kind="pdf",
        text=text,
        title="paged",
        char_page=np.asarray(char_page, dtype=np.int32),
        char_bbox_pt=boxes,
    )


@pytest.mark.parametrize(
    "char_page",
    [
        [1, 1, 0, 1, 0, 0, 2, 2, 0, 3, 0, 0, 5, 5],  # inserted chars, a page without text
        [2, 0, 1, 1, 0, 3, 0, 2],  # pages out of order: the run scan
        [0, 0, 0],
    ],
)
def test_pages_of_span_matches_the_document(char_page: list[int], tokenizer: Tokenizer) -> None:
    from core.chunk.analysis import DocAnalysis

    doc = _paged(char_page)
    analysis = DocAnalysis(doc, tokenizer)
    n = len(doc.text)
    for start in range(n + 1):
        for end in range(start, n + 1):
            assert analysis.pages_of(doc, start, end) == doc.pages_of(start, end), (start, end)
    spans = np.array([(a, b) for a in range(n + 1) for b in range(n + 1)], dtype=np.int64)
    many = analysis.pages_of_spans(doc, spans[:, 0], spans[:, 1])
    assert many == [doc.pages_of(int(a), int(b)) for a, b in spans]


def test_a_spans_pages_are_its_characters_pages_short_or_long() -> None:
    """``Document.pages_of`` reads a short span as a list and a long one with numpy's
    sort: both are the sorted pages of the span's characters, inserted ones (0) aside."""
    rnd = np.random.default_rng(4)
    char_page = np.repeat(np.arange(1, 41, dtype=np.int32), 300)
    char_page[rnd.random(len(char_page)) < 0.1] = 0  # inserted characters
    char_page[3000:3600] = 0  # a page without text
    doc = _paged(char_page.tolist())
    for _ in range(400):
        start = int(rnd.integers(0, len(char_page)))
        end = start + int(rnd.choice([0, 1, 5, 299, 301, 4096, 4097, 9000]))
        want = tuple(int(p) for p in np.unique(char_page[start:end]) if p > 0)
        assert doc.pages_of(start, end) == want, (start, end)


def test_block_kinds_match_a_scan_with_and_without_overlaps() -> None:
    from core.chunk.annotate import BlockIndex

    text = "h para list item more paragraphs and a table here"

    def block(kind: str, start: int, end: int) -> Block:
        level = 1 if kind == "heading" else 0
        return Block(
            doc_id="d",
            doc_sha256="s",
            kind=kind,  # type: ignore[arg-type]
            char_start=start,
            char_end=end,
            text=text[start:end],
            page=0,
            bbox_pt=None,
            level=level,
        )

    disjoint = [
        block(k, a, b)
        for k, a, b in [
            ("heading", 0, 1),
            ("paragraph", 2, 6),
            ("list", 7, 16),
            ("paragraph", 17, 33),
            ("table", 38, 49),
        ]
    ]
    overlapping = [*disjoint[:2], block("code", 4, 12), *disjoint[2:]]
    for blocks in (disjoint, overlapping):
        index = BlockIndex(blocks)
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                scanned = {b.kind for b in blocks if b.char_end > start and b.char_start < end}
                if end > start:
                    assert index.kinds(start, end) == tuple(sorted(scanned)), (start, end)
        spans = np.array(
            [(a, b) for a in range(len(text) + 1) for b in range(a, len(text) + 1)],
            dtype=np.int64,
        )
        starts, ends = spans[:, 0], spans[:, 1]
        kinds = [index.kinds(int(a), int(b)) for a, b in spans]
        assert index.kinds_of(starts, ends) == kinds
        assert index.paths_at(starts) == [index.path_at(int(a)) for a in starts]


@pytest.mark.parametrize("cache_limit", [500_000, 3])
def test_batch_counts_equal_single_counts(
    cache_limit: int, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.chunk.analysis as analysis_module

    monkeypatch.setattr(analysis_module, "_MAX_CACHED_COUNTS", cache_limit)
    text = "Tokenization of unbelievably long words, e.g. naïve café-au-lait (x2) \u200d done."
    analysis = analysis_module.DocAnalysis(make_doc(text), tokenizer)
    n = len(text)
    spans = [(a, b) for a in range(0, n + 1, 3) for b in range(a, n + 1, 2)]
    expected = [tokenizer.count(text[a:b]) for a, b in spans]
    assert analysis.counts(spans) == expected
    assert [analysis.count(a, b) for a, b in spans] == expected
    assert analysis.counts(spans[::-1]) == expected[::-1]  # now from the cache
    assert analysis.counts([]) == []


def test_no_character_below_the_combining_block_attaches() -> None:
    from core.chunk.spans import _attaches

    assert not any(_attaches(chr(code)) for code in range(0x300))
