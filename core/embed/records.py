"""Records produced by the embed stage: one vector per chunk, and the late macro-windows.

Token indices are positions in the document's token sequence as the encoder's fast
tokenizer produces it for the whole canonical text *without* special tokens; spans are
half-open ``[token_start, token_end)``. Character spans are half-open offsets into
``Document.text``, as everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

ContextLevel = Literal["full", "partial", "none"]
CONTEXT_LEVELS: tuple[str, ...] = ("full", "partial", "none")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ChunkVector:
    """The vector of one chunk under one method, with what the encoder did and did not see.

    ``vector`` is float32 of shape ``(dim,)`` and L2-normalised. ``token_count`` counts the
    chunk's tokens without special tokens: for ``naive`` the chunk text tokenised alone, for
    ``contextual`` also the chunk text alone (the prefix is not counted), for ``late`` the
    document tokens that overlap the span. ``truncated_tokens`` is how many tokens of the
    encoded text the vector never saw (always 0 for ``late``: every token has a state).
    ``windows`` (late only) are the macro-windows that gave the chunk's token states.
    ``context`` is ``"none"`` for naive/contextual; for late ``"full"`` when every token
    of the chunk had at least the margin of context on both sides in its window (a
    document edge counts as full context), else ``"partial"``; ``full_context_tokens``
    counts the chunk's tokens that had that full context. ``prefix`` is the text the
    method read before the chunk's own (a lexical method's contextual prefix), ``""`` when
    none; it is stored with the record so a lexical index can be rebuilt from the store.
    Records compare by identity (the vector is an array); compare fields and vectors
    explicitly.
    """

    chunk_id: str
    method: str
    vector: np.ndarray = field(repr=False)
    token_count: int
    truncated_tokens: int = 0
    windows: tuple[int, ...] = ()
    context: ContextLevel = "none"
    full_context_tokens: int = 0
    prefix: str = ""

    def __post_init__(self) -> None:
        if self.vector.ndim != 1:
            raise ValueError("ChunkVector.vector must be one-dimensional")
        if self.context not in CONTEXT_LEVELS:
            raise ValueError(f"unknown context level {self.context!r}")
        if not 0 <= self.full_context_tokens <= self.token_count:
            raise ValueError("full_context_tokens must be within [0, token_count]")
        if self.truncated_tokens < 0:
            raise ValueError("truncated_tokens cannot be negative")

    @property
    def dim(self) -> int:
        return int(self.vector.shape[0])

    def to_dict(self) -> dict[str, object]:
        return {
            "chunk_id": self.chunk_id,
            "method": self.method,
            "vector": [float(x) for x in self.vector.tolist()],
            "token_count": self.token_count,
            "truncated_tokens": self.truncated_tokens,
            "windows": list(self.windows),
            "context": self.context,
            "full_context_tokens": self.full_context_tokens,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LateWindow:
    """One macro-window of late chunking over the document's tokens.

    ``[token_start, token_end)`` is what the model saw in one forward pass (plus its own
    special tokens); ``[owned_token_start, owned_token_end)`` are the tokens whose states
    are taken from this window (the owned ranges of all windows partition the document's
    tokens). ``char_*`` are the matching character spans of ``Document.text``, from the
    first token's start to the last token's end.
    """

    index: int
    token_start: int
    token_end: int
    owned_token_start: int
    owned_token_end: int
    char_start: int
    char_end: int
    owned_char_start: int
    owned_char_end: int

    def __post_init__(self) -> None:
        if not (
            self.token_start <= self.owned_token_start <= self.owned_token_end <= self.token_end
        ):
            raise ValueError(f"window {self.index}: owned tokens must lie inside the window")

    @property
    def n_tokens(self) -> int:
        return self.token_end - self.token_start

    def to_dict(self) -> dict[str, int]:
        return {
            "index": self.index,
            "token_start": self.token_start,
            "token_end": self.token_end,
            "owned_token_start": self.owned_token_start,
            "owned_token_end": self.owned_token_end,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "owned_char_start": self.owned_char_start,
            "owned_char_end": self.owned_char_end,
        }
