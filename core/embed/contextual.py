"""Contextual vectors: the chunk text prefixed with where it sits, encoded on its own.

The exact text encoded (see :func:`contextual_text`)::

    <document title>
    <heading 1> > <heading 2> > ...
    <blank line>
    <chunk text>

A line is left out when it would be empty (no title, no heading path); a chunk with
neither is encoded as its bare text, which makes its vector equal to the naive one.
The prefix comes first, so when the whole is longer than the model's limit it is the
chunk's tail that is cut, and ``truncated_tokens`` says how much.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.embed.naive import encode_alone, header_variant, text_digest
from core.embed.records import ChunkVector
from core.protocols import TextEncoder
from core.provenance.types import Chunk, Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.embed.late import WindowPolicy
    from core.methods.spec import MethodSpec

Progress = Callable[[int, int], None]
HEADING_SEPARATOR = " > "


def contextual_prefix(doc: Document, chunk: Chunk, *, unread: bool = False) -> str:
    """Title and heading path lines, or ``""`` when the chunk has neither. ``unread``:
    less what the chunk's own text already holds (the title, each heading of its path)."""
    flat = " ".join(chunk.text.split()) if unread else ""
    title = " ".join(doc.title.split())
    heads = [" ".join(h.split()) for h in chunk.heading_path]
    if unread:
        title = "" if title in flat else title
        heads = [h for h in heads if h not in flat]
    lines = [title, HEADING_SEPARATOR.join(heads)]
    return "\n".join(line for line in lines if line)


def contextual_text(doc: Document, chunk: Chunk) -> str:
    """``title\\nh1 > h2\\n\\nchunk text`` (empty lines omitted; see the module docstring)."""
    prefix = contextual_prefix(doc, chunk)
    body = chunk.encoder_text  # a split table's header rows first, when the policy asks
    return f"{prefix}\n\n{body}" if prefix else body


def prefix_variant(doc: Document, chunk: Chunk, policy: WindowPolicy | None) -> str:
    """``ctx-<digest of the prefix>``, then the header rule's ``thp-<digest>`` when a
    split table's header rows are read too."""
    return "ctx-" + text_digest(contextual_prefix(doc, chunk)) + header_variant(doc, chunk, policy)


def contextual_vectors(
    spec: MethodSpec,
    doc: Document,
    chunks: Sequence[Chunk],
    encoder: TextEncoder,
    *,
    policy: WindowPolicy | None = None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """Contextual vectors (same order as ``chunks``); token_count counts the chunk alone."""
    return encode_alone(
        [c.chunk_id for c in chunks],
        [contextual_text(doc, c) for c in chunks],
        [c.text for c in chunks],
        encoder,
        method=spec.name,
        progress=progress,
    )
