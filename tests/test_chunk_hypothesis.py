"""Property tests: every policy keeps every invariant on random text and random blocks.

Text mixes Latin, right-to-left scripts (Arabic, Hebrew), combining marks, emoji with
ZWJ sequences, skin tones and flags, CRLF, lone CR, tabs, sentence-like punctuation and
Markdown-ish lines; empty and whitespace-only texts are included. Two tokenizers run:
the real one, and a toy one whose counts of a substring can exceed the document tokens
inside it (so the chunkers' shrink-to-fit path is exercised).
"""

from __future__ import annotations

import hashlib
import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chunk import assert_chunk_invariants

from core.chunk import chunk_document, chunk_stats
from core.chunk import policy_registry as registry
from core.model.tokens import load_tokenizer
from core.provenance.types import BLOCK_KINDS, Block, ChunkPolicy, Document

# Raise for a deeper search, e.g. CHUNKSCOPE_HYPOTHESIS_EXAMPLES=5000 (about 2 minutes).
EXAMPLES = int(os.environ.get("CHUNKSCOPE_HYPOTHESIS_EXAMPLES", "300"))
FRAGMENTS = [
    "Hello world. ",
    "e.g. this, ",
    "Dr. Who ",
    "U.S. Army ",
    "3.14 ",
    "... ",
    "Wait! ",
    "Why? ",
    "(see Fig. 2.) ",
    '"Quoted." ',
    "However, ",
    "but ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\n\n",
    "\r\n\r\n",
    "  ",
    "# Heading\n",
    "- item\n",
    "1. first\n",
    "a | b | c\n",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0643. ",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd. ",
    "e\u0301",
    "a\u0308\u0301",
    "\u064b",
    "\U0001f600",
    "\U0001f44d\U0001f3fd",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u2764\ufe0f",
    "\U0001f1e9\U0001f1ea",
    "\u200d",
    "\u3002",
    "\u2026",
    "x",
    "supercalifragilistic",
    "internationalization ",
    "\u2029",
    "\x0c",
    "\u00a0",
    "\ufffd",
    "\U0001d400",
]
ALPHABET = st.characters(
    codec="utf-8",
    categories=("L", "M", "N", "P", "S", "Zs", "Cc", "Cf"),
    exclude_characters="\x00",
)
texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=ALPHABET, max_size=12)), max_size=40
).map("".join)


class ToyTokenizer:
    """Words in pieces of three characters, every other non-space character alone.

    A substring that starts inside a piece re-tokenizes into more pieces than the
    document tokens it holds, like WordPiece on a word cut in the middle.
    """

    name = "toy"

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        spans = []
        for match in re.finditer(r"\w+|[^\w\s]", text):
            start, end = match.span()
            spans.extend((s, min(s + 3, end)) for s in range(start, end, 3))
        return spans

    def count(self, text: str) -> int:
        return len(self.token_spans(text))


TOKENIZERS = {"real": load_tokenizer(), "toy": ToyTokenizer()}


def make_doc(text: str) -> Document:
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Document(doc_id="hyp", sha256=sha, source="hyp.txt", kind="text", text=text, title="h")


@st.composite
def documents(draw: st.DrawFn) -> tuple[Document, list[Block]]:
    """A random text and random blocks over it (with gaps, any kinds, heading levels,
    some flagged garbled)."""
    doc = make_doc(draw(texts))
    n = len(doc.text)
    cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=12)) + [0, n]))
    blocks: list[Block] = []
    path: list[str] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        kind = draw(st.sampled_from([*BLOCK_KINDS, None]))
        if kind is None:
            continue  # a gap: text that no block holds
        level = draw(st.integers(1, 3)) if kind == "heading" else 0
        if level:
            path[:] = [*path[: level - 1], f"h{start}"]
        blocks.append(
            Block(
                doc_id=doc.doc_id,
                doc_sha256=doc.sha256,
                kind=kind,
                char_start=start,
                char_end=end,
                text=doc.text[start:end],
                page=0,
                bbox_pt=None,
                heading_path=tuple(path),
                level=level,
                garbled=draw(st.integers(0, 4)) == 0,  # what a skip_garbled policy leaves out
            )
        )
    return doc, blocks


@st.composite
def policies(draw: st.DrawFn) -> ChunkPolicy:
    """Any registered policy in any of its units, with any of the options it takes."""
    spec = registry.get(draw(st.sampled_from(registry.policy_names())))
    unit = draw(st.sampled_from(spec.units))
    high = {"chars": 80, "tokens": 24, "sentences": 5}[unit]
    size = draw(st.integers(1, high))
    overlap = draw(st.integers(0, size - 1))
    options = {name: draw(st.booleans()) for name in sorted(spec.options)}
    return ChunkPolicy(name=spec.name, size=size, overlap=overlap, unit=unit, **options)  # type: ignore[arg-type]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(documents(), policies(), st.sampled_from(sorted(TOKENIZERS)))
def test_every_policy_keeps_invariants(
    case: tuple[Document, list[Block]], policy: ChunkPolicy, tokenizer_name: str
) -> None:
    doc, blocks = case
    tokenizer = TOKENIZERS[tokenizer_name]
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    assert chunk_document(doc, blocks, policy, tokenizer) == chunks
    stats = chunk_stats(doc, chunks, blocks, tokenizer, max_tokens=8)
    assert stats.n_chunks == len(chunks)
    assert 0.0 <= stats.overlap_share <= 1.0 and 0.0 <= stats.coverage_share <= 1.0


@settings(max_examples=100, deadline=None)
@given(texts, policies())
def test_without_blocks_and_on_blank_text(text: str, policy: ChunkPolicy) -> None:
    for candidate in (text, text.replace("\n", "\r\n"), " \t\r\n" * 3, ""):
        doc = make_doc(candidate)
        tokenizer = TOKENIZERS["real"]
        chunks = chunk_document(doc, [], policy, tokenizer)
        assert_chunk_invariants(doc, [], policy, chunks, tokenizer)
        if not candidate.strip():
            assert chunks == []


def test_a_region_inside_one_token_cell_is_flagged_oversize() -> None:
    """The garbled first block is skipped, and no token cell of the whole text starts in
    what is left ("0A" continues the cell of "000𑁒"): that region is one uncut piece of two
    tokens, over a size of one, so it is flagged oversize (a case the random search found)."""
    doc = make_doc("000\U00011052" + "0A")
    blocks = [
        Block(doc_id=doc.doc_id, doc_sha256=doc.sha256, kind="paragraph", char_start=s,
              char_end=e, text=doc.text[s:e], page=0, bbox_pt=None, garbled=garbled)
        for s, e, garbled in ((0, 4, True), (4, 6, False))
    ]  # fmt: skip
    policy = ChunkPolicy(name="fixed", size=1, overlap=0, unit="tokens", skip_garbled=True)
    chunks = chunk_document(doc, blocks, policy, TOKENIZERS["real"])
    assert [(c.text, c.oversize) for c in chunks] == [("0A", True)]
    assert_chunk_invariants(doc, blocks, policy, chunks, TOKENIZERS["real"])
