"""Chunking: a document's blocks become chunks under a named policy.

Every chunk is one span of ``doc.text`` with exact provenance:

* ``text == doc.text[char_start:char_end]``; chunks are sorted by ``(char_start,
  char_end)``; they never start or end with whitespace;
* the chunks of ``fixed`` and ``sentence`` cover every non-whitespace character; those
  of ``structure`` cover every non-whitespace character outside page header/footer
  blocks and hold none of those (see ``structure``);
* ``chunk_id = make_chunk_id(doc_id, doc_sha256, policy, char_start, char_end)``, so
  ids are stable across runs and unique within a document and policy;
* ``pages`` = ``doc.pages_of(span)``; ``block_kinds`` = sorted kinds of the blocks that
  overlap the span; ``heading_path`` = the ``heading_path`` of the block holding the
  chunk's first character, or of the last block before it when no block holds it (for
  ``structure``: of its section's heading, see ``structure``);
* ``header_rows`` = the ``header_rows`` of the table block holding the chunk's first
  character (so every piece of a split table carries its column headings), else ``()``;
* ``token_count`` = ``tokenizer.count(text)`` (no special tokens);
* ``start_s``/``end_s`` = ``doc.time_range(span)`` for transcripts, else ``None``;
* size: ``len(text) <= size`` (chars) or ``token_count <= size`` (tokens) unless
  ``oversize``, which is set only when one uncuttable unit alone is larger.

Default sizes (``DEFAULT_SIZES``) suit all-MiniLM-L6-v2, whose window is 256 tokens
including ``[CLS]`` and ``[SEP]``: ``fixed`` 800/100 chars (English prose runs about
4-5 chars a token) or 200/40 tokens; ``sentence`` 5/1 sentences; ``structure`` 240/24
tokens or 1000/100 chars. ``fixed`` counts chars unless told otherwise (the usual
baseline); ``structure`` counts tokens, because chars are a poor proxy outside English
(1000 chars of the German GeoTopo thesis are about 420 tokens, far over the window).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.chunk.analysis import DocAnalysis, analysis_for
from core.chunk.annotate import BlockIndex
from core.chunk.fixed import fixed_pieces
from core.chunk.sentence import sentence_pieces
from core.chunk.sentences import sentence_spans
from core.chunk.spans import Piece
from core.chunk.stats import ChunkStats, chunk_stats
from core.chunk.structure import EXCLUDED_KINDS, structure_pieces
from core.errors import ChunkscopeError
from core.tokens import Tokenizer, load_tokenizer
from core.types import Block, Chunk, ChunkPolicy, Document, chunk_id_maker, cue_time_ranges

__all__ = [
    "DEFAULT_POLICIES",
    "DEFAULT_SIZES",
    "EXCLUDED_KINDS",
    "POLICY_NAMES",
    "ChunkStats",
    "PolicyError",
    "chunk_document",
    "chunk_stats",
    "policy_from_args",
    "sentence_spans",
]

POLICY_NAMES: tuple[str, ...] = ("fixed", "sentence", "structure")
DEFAULT_UNITS: dict[str, str] = {"fixed": "chars", "sentence": "sentences", "structure": "tokens"}
# (policy name, unit) -> (size, overlap)
DEFAULT_SIZES: dict[tuple[str, str], tuple[int, int]] = {
    ("fixed", "chars"): (800, 100),
    ("fixed", "tokens"): (200, 40),
    ("sentence", "sentences"): (5, 1),
    ("structure", "chars"): (1000, 100),
    ("structure", "tokens"): (240, 24),
}
DEFAULT_POLICIES: dict[str, ChunkPolicy] = {
    name: ChunkPolicy(
        name=name,  # type: ignore[arg-type]
        size=DEFAULT_SIZES[(name, DEFAULT_UNITS[name])][0],
        overlap=DEFAULT_SIZES[(name, DEFAULT_UNITS[name])][1],
        unit=DEFAULT_UNITS[name],  # type: ignore[arg-type]
    )
    for name in POLICY_NAMES
}


class PolicyError(ChunkscopeError):
    """A policy that cannot be built from what the user asked for."""


def policy_from_args(
    name: str,
    size: int | None = None,
    overlap: int | None = None,
    unit: str | None = None,
    *,
    table_header_prefix: bool = False,
) -> ChunkPolicy:
    """A policy from user input, filling what is missing from ``DEFAULT_SIZES``.

    ``unit`` defaults to ``DEFAULT_UNITS[name]`` (chars, sentences, tokens). ``size`` defaults to
    the unit's default size; ``overlap`` to the default overlap when ``size`` is the
    default, else to the same fraction of ``size`` (rounded down).
    ``table_header_prefix`` (structure only) is ``ChunkPolicy``'s option. Raises
    ``PolicyError`` with a one-line message for impossible combinations.
    """
    if name not in POLICY_NAMES:
        raise PolicyError(f"unknown policy {name!r}: use one of {', '.join(POLICY_NAMES)}")
    unit = unit or DEFAULT_UNITS[name]
    if (name, unit) not in DEFAULT_SIZES:
        allowed = ", ".join(u for n, u in DEFAULT_SIZES if n == name)
        raise PolicyError(f"the {name} policy counts in {allowed}, not {unit}")
    default_size, default_overlap = DEFAULT_SIZES[(name, unit)]
    if size is None:
        size = default_size
    if size < 1:
        raise PolicyError(f"--size must be at least 1, got {size}")
    if overlap is None:
        overlap = (
            default_overlap if size == default_size else size * default_overlap // default_size
        )
    if not 0 <= overlap < size:
        raise PolicyError(f"--overlap must be at least 0 and below --size ({size}), got {overlap}")
    if table_header_prefix and name != "structure":
        raise PolicyError("--table-header-prefix works with the structure policy only")
    return ChunkPolicy(
        name=name,  # type: ignore[arg-type]
        size=size,
        overlap=overlap,
        unit=unit,  # type: ignore[arg-type]
        table_header_prefix=table_header_prefix,
    )


def chunk_document(
    doc: Document,
    blocks: Sequence[Block],
    policy: ChunkPolicy,
    tokenizer: Tokenizer | None = None,
) -> list[Chunk]:
    """Chunks of ``doc`` under ``policy`` (see the module doc for the guarantees).

    ``blocks`` are the parser's blocks of this document (any order; may be empty, then
    ``structure`` treats the text as paragraphs). ``tokenizer`` defaults to
    ``load_tokenizer()``; per-document work is cached, so re-chunking is cheap.
    """
    tokenizer = tokenizer if tokenizer is not None else load_tokenizer()
    analysis = analysis_for(doc, tokenizer)
    index = analysis.block_index(blocks)
    if policy.name == "fixed":
        pieces = fixed_pieces(analysis, policy)
    elif policy.name == "sentence":
        pieces = sentence_pieces(analysis, index, policy)
    else:
        pieces = structure_pieces(analysis, index, policy)
    return _chunks(doc, analysis, index, policy, pieces)


def _chunks(
    doc: Document,
    analysis: DocAnalysis,
    index: BlockIndex,
    policy: ChunkPolicy,
    pieces: list[Piece],
) -> list[Chunk]:
    spans = [(p.char_start, p.char_end) for p in pieces]
    if spans != sorted(spans):
        pieces = sorted(pieces, key=lambda p: (p.char_start, p.char_end))
        spans = [(p.char_start, p.char_end) for p in pieces]
    counts = analysis.counts(spans)
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    starts, ends = bounds[:, 0], bounds[:, 1]
    pages = analysis.pages_of_spans(doc, starts, ends)
    kinds = index.kinds_of(starts, ends)
    paths = index.paths_at(starts)
    times = cue_time_ranges(doc.cues, spans)
    garbled = [(b.char_start, b.char_end) for b in index.blocks if b.garbled]
    text, doc_id, sha256 = doc.text, doc.doc_id, doc.sha256
    chunk_id = chunk_id_maker(doc_id, sha256, policy)
    chunks: list[Chunk] = []
    for k, piece in enumerate(pieces):
        start, end = piece.char_start, piece.char_end
        heading = piece.heading_block
        time = times[k]
        header = _table_header(index, start) if "table" in kinds[k] else ()
        chunks.append(
            Chunk(
                chunk_id=chunk_id(start, end),
                doc_id=doc_id,
                doc_sha256=sha256,
                char_start=start,
                char_end=end,
                text=text[start:end],
                pages=pages[k],
                heading_path=paths[k] if heading is None else index.path(heading),
                block_kinds=kinds[k],
                token_count=counts[k],
                policy=policy,
                oversize=piece.oversize,
                start_s=None if time is None else time[0],
                end_s=None if time is None else time[1],
                header_rows=header,
                header_text="\n".join(text[a:b] for a, b in header),
                garbled=any(a < end and start < b for a, b in garbled),
            )
        )
    return chunks


def _table_header(index: BlockIndex, position: int) -> tuple[tuple[int, int], ...]:
    """Header rows of the table block holding ``position`` (``()`` when there is none)."""
    at = index.at(position)
    if at is None:
        return ()
    block = index.blocks[at]
    if block.kind != "table" or not block.char_start <= position < block.char_end:
        return ()
    return block.header_rows
