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

Policies come from the registry (``core.chunk.policy_registry``; built-ins and their default
sizes in ``core.chunk.builtin``): ``chunk_document`` asks the policy's spec for the
pieces and builds every record the same way, so the guarantees on records, ids, sizes
and metadata hold for any registered policy (coverage is each policy's own rule). With
``skip_garbled``, blocks flagged garbled are in no chunk and no chunk spans across one;
coverage then excludes them as it excludes headers/footers.

Modules:

- ``policy_spec``: what a policy is (``PolicySpec``) and the options a policy may turn on;
- ``policy_registry``: every policy, registered once, read everywhere;
- ``live_names``: names of live policies (the user's splitter: ``KIND:TARGET(params)``);
- ``builtin``: the built-in policies as registry entries, with their default sizes;
- ``fixed``: the ``fixed`` policy: windows of characters or tokens with overlap;
- ``sentence``: the ``sentence`` policy: windows of sentences with overlap;
- ``structure``: the ``structure`` policy: chunks follow blocks and sections;
- ``packing``: the structure policy's packer, units placed greedily into chunks;
- ``sentence_bounds``: rule-based sentence segmentation into exact spans;
- ``spans``: span arithmetic: stripping, safe cut points, sizes, cutting;
- ``skip``: what a policy leaves out of every chunk (garbled blocks);
- ``analysis``: per-document work every policy shares: token cells, sentences, counts;
- ``annotate``: what a span overlaps: blocks, their kinds, the heading path;
- ``stats``: the numbers that describe one chunking of one document.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.chunk import builtin
from core.chunk import policy_registry as registry
from core.chunk.analysis import DocAnalysis, analysis_for
from core.chunk.annotate import BlockIndex
from core.chunk.live_names import is_live, parse_live_name
from core.chunk.policy_registry import PolicyError, PolicySpec
from core.chunk.sentence_bounds import sentence_spans
from core.chunk.spans import Piece
from core.chunk.stats import ChunkStats, chunk_stats
from core.chunk.structure import EXCLUDED_KINDS
from core.model.tokens import Tokenizer, load_tokenizer
from core.provenance.types import (
    Block,
    Chunk,
    ChunkPolicy,
    Document,
    chunk_id_maker,
    cue_time_ranges,
)

__all__ = [
    "EXCLUDED_KINDS",
    "ChunkStats",
    "PolicyError",
    "PolicySpec",
    "chunk_document",
    "chunk_stats",
    "default_policy",
    "policy_from_args",
    "registry",
    "sentence_spans",
]

registry.register_builtins(builtin.builtin_specs())
registry.load_plugins()  # installed packages' chunkscope.policies entry points


def default_policy(name: str) -> ChunkPolicy:
    """The registered policy ``name`` at its default unit and sizes (``PolicyError`` for
    an unknown name)."""
    return registry.check_policy(registry.get(name).default_policy())


def policy_from_args(
    name: str,
    size: int | None = None,
    overlap: int | None = None,
    unit: str | None = None,
    *,
    table_header_prefix: bool = False,
    skip_garbled: bool = False,
    params: dict[str, object] | None = None,
) -> ChunkPolicy:
    """A policy from user input, filling what is missing from the policy's spec.

    ``unit`` defaults to the spec's unit. ``size`` defaults to the unit's default size;
    ``overlap`` to the default overlap when ``size`` is the default, else to the same
    fraction of ``size`` (rounded down). The options (``ChunkPolicy``'s) must be ones
    the policy accepts. ``params`` (``--param KEY=VALUE``, ``--per-page`` as
    ``per_page=True``) are a live policy's splitter parameters, folded into its name
    (``core.chunk.live_names``). Raises ``PolicyError`` with a one-line message for
    impossible combinations.
    """
    if params:
        if not is_live(name):
            raise PolicyError(
                f"--param and --per-page work with a splitter of your own (KIND:TARGET), "
                f"not the {name} policy"
            )
        name = parse_live_name(name).with_params(params).name
    spec = registry.get(name)
    name = spec.name  # a live name in its canonical form
    if spec.fixed_boundaries:
        return _fixed_policy(spec, size, overlap, unit, table_header_prefix or skip_garbled)
    unit = unit or spec.unit
    if unit not in spec.sizes:
        raise PolicyError(f"the {name} policy counts in {', '.join(spec.units)}, not {unit}")
    default_size, default_overlap = spec.sizes[unit]
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
    options = {"table_header_prefix": table_header_prefix, "skip_garbled": skip_garbled}
    for option, on in options.items():
        if on and option not in spec.options:
            policies = " or ".join(registry.accepting(option))
            flag = registry.option(option).flag
            raise PolicyError(f"{flag} works with the {policies} policy only")
    return registry.check_policy(
        ChunkPolicy(name=name, size=size, overlap=overlap, unit=unit, **options)
    )


def _fixed_policy(
    spec: PolicySpec, size: int | None, overlap: int | None, unit: str | None, options: bool
) -> ChunkPolicy:
    """The one policy of a set whose boundaries are fixed; a size, overlap, unit or option
    that asks for other boundaries is refused in one line."""
    policy = spec.default_policy()
    asked = (size not in (None, policy.size) or overlap not in (None, 0)
             or unit not in (None, policy.unit) or options)  # fmt: skip
    if asked:
        raise PolicyError(
            f"the {spec.name} chunks were imported: their boundaries are fixed, so --size, "
            "--overlap, --unit and the policy options do not apply"
        )
    return policy


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
    registry.check_policy(policy)  # plain data until here: a name, a unit, options
    tokenizer = tokenizer if tokenizer is not None else load_tokenizer()
    analysis = analysis_for(doc, tokenizer)
    index = analysis.block_index(blocks)
    pieces = registry.get(policy.name).pieces(analysis, index, policy)
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
    garbled_spans = [(b.char_start, b.char_end) for b in index.blocks if b.garbled]
    garbled = _overlapping(starts, ends, garbled_spans)
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
                garbled=garbled[k],
            )
        )
    return chunks


def _overlapping(starts: np.ndarray, ends: np.ndarray, spans: list[tuple[int, int]]) -> list[bool]:
    """Per chunk ``[starts[k], ends[k])``, whether it shares a character with one of
    ``spans``: the spans that start before the chunk ends are a prefix of them sorted by
    start, and one reaches into the chunk when the furthest end among them does."""
    if not spans:
        return [False] * len(starts)
    ordered = np.asarray(sorted(spans), dtype=np.int64).reshape(-1, 2)
    reach = np.maximum.accumulate(ordered[:, 1])
    before = np.searchsorted(ordered[:, 0], ends, side="left")  # spans with start < end
    furthest = reach[np.maximum(before - 1, 0)]
    return ((before > 0) & (furthest > starts)).tolist()


def _table_header(index: BlockIndex, position: int) -> tuple[tuple[int, int], ...]:
    """Header rows of the table block holding ``position`` (``()`` when there is none)."""
    at = index.at(position)
    if at is None:
        return ()
    block = index.blocks[at]
    if block.kind != "table" or not block.char_start <= position < block.char_end:
        return ()
    return block.header_rows
