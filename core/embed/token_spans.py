"""Character spans to token spans, and the macro-windows of late chunking.

The document's canonical text is tokenised once by the encoder's fast tokenizer, without
special tokens, with ``return_offsets_mapping``: token ``i`` covers the characters
``[starts[i], ends[i])`` of ``Document.text`` (Python string indices). A token that covers
no character (an empty offset, which some tokenizers emit) is treated as covering the one
character at its start, so every token has a non-empty extent.

**Boundary rule.** A token belongs to a chunk iff its extent overlaps the chunk's span by
at least one character: ``starts[i] < char_end and ends[i] > char_start``. A chunk boundary
that falls inside a token (mid-word) therefore gives that token to *both* chunks on
either side of the boundary. Characters the tokenizer drops (whitespace, control
characters) belong to no token; a chunk made only of them has no token of its own (see
``late.py`` for what its vector is).

**Macro-windows.** ``window`` content tokens per forward pass (the model adds its own
special tokens around each window, e.g. ``[CLS] ... [SEP]``), windows start every
``stride`` tokens, and the last window is aligned to the end of the document so every
window is full. Each token takes its state from exactly one window: the one in which it
sits furthest from a window edge, where an edge that is also a document edge does not
count (there is no context beyond it to miss). Ties go to the earlier window. A token has
*full context* when, in its owning window, it has at least ``margin`` tokens on both sides
(or the document edge is nearer on that side).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DocTokens:
    """The whole document's tokens: ids and character extents, all ``(n,)`` int64."""

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def tokenize_document(tokenizer: object, text: str) -> DocTokens:
    """Tokenise ``text`` once, no special tokens, with character offsets."""
    if not text:
        empty = np.zeros(0, dtype=np.int64)
        return DocTokens(ids=empty, starts=empty, ends=empty)
    enc = tokenizer(  # type: ignore[operator]
        text,
        add_special_tokens=False,
        return_offsets_mapping=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        verbose=False,
    )
    ids = np.asarray(enc["input_ids"], dtype=np.int64)
    offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    starts = offsets[:, 0].copy()
    ends = np.maximum(offsets[:, 1], starts + 1)
    return DocTokens(ids=ids, starts=starts, ends=ends)


def token_spans(
    tokens: DocTokens, char_starts: np.ndarray, char_ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Token spans ``[tok_start, tok_end)`` of character spans, by the boundary rule.

    Vectorised over spans. A span with no token gets ``tok_start == tok_end`` (at the
    first token after it).
    """
    # Ends are non-decreasing for every sane tokenizer; the running maximum makes the
    # binary search well defined even if one is not.
    ends_sorted = np.maximum.accumulate(tokens.ends) if len(tokens) else tokens.ends
    first = np.searchsorted(ends_sorted, np.asarray(char_starts), side="right")
    stop = np.searchsorted(tokens.starts, np.asarray(char_ends), side="left")
    empty = np.asarray(char_ends) <= np.asarray(char_starts)
    stop = np.where(empty, first, np.maximum(stop, first))
    return first.astype(np.int64), stop.astype(np.int64)


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowPlan:
    """Macro-windows over ``n_tokens`` tokens and who owns each token.

    ``starts``/``stops``: each window's ``[start, stop)``; ``owned_starts``/``owned_stops``:
    contiguous owned ranges that partition ``[0, n_tokens)`` in window order;
    ``full_context``: per token, whether it had ``margin`` tokens of context both sides.
    """

    n_tokens: int
    window: int
    stride: int
    margin: int
    starts: np.ndarray
    stops: np.ndarray
    owned_starts: np.ndarray
    owned_stops: np.ndarray
    full_context: np.ndarray

    @property
    def count(self) -> int:
        return int(self.starts.shape[0])


def window_starts(n_tokens: int, window: int, stride: int) -> np.ndarray:
    """Starts ``0, stride, 2*stride, ...`` with the last window aligned to the end."""
    if window < 1 or not 1 <= stride <= window:
        raise ValueError("need window >= 1 and 1 <= stride <= window")
    if n_tokens <= window:
        return np.zeros(1, dtype=np.int64)
    starts = np.arange(0, n_tokens - window, stride, dtype=np.int64)
    return np.append(starts, n_tokens - window)


def plan_windows(n_tokens: int, window: int, stride: int, margin: int) -> WindowPlan:
    """Windows, token ownership (furthest from an edge; ties to the earlier window)."""
    starts = window_starts(n_tokens, window, stride)
    stops = np.minimum(starts + window, n_tokens)
    big = np.int64(n_tokens + 1)  # stands for "document edge: no context is missing"
    best = np.full(n_tokens, -1, dtype=np.int64)
    owner = np.zeros(n_tokens, dtype=np.int64)
    for k, (lo, hi) in enumerate(zip(starts.tolist(), stops.tolist(), strict=True)):
        pos = np.arange(lo, hi, dtype=np.int64)
        left = pos - lo if lo > 0 else np.full_like(pos, big)
        right = hi - 1 - pos if hi < n_tokens else np.full_like(pos, big)
        score = np.minimum(left, right)
        better = score > best[lo:hi]
        best[lo:hi] = np.where(better, score, best[lo:hi])
        owner[lo:hi] = np.where(better, k, owner[lo:hi])
    counts = np.bincount(owner, minlength=len(starts)) if n_tokens else np.zeros(1, np.int64)
    owned_stops = np.cumsum(counts).astype(np.int64)
    owned_starts = owned_stops - counts
    if n_tokens and not np.array_equal(owner, np.repeat(np.arange(len(starts)), counts)):
        raise AssertionError("window ownership is not contiguous")
    return WindowPlan(
        n_tokens=n_tokens,
        window=window,
        stride=stride,
        margin=margin,
        starts=starts,
        stops=stops,
        owned_starts=owned_starts,
        owned_stops=owned_stops,
        full_context=best >= margin,
    )


def windows_of_spans(
    plan: WindowPlan, tok_starts: np.ndarray, tok_stops: np.ndarray
) -> list[tuple[int, ...]]:
    """For each token span, the windows that own at least one of its tokens."""
    first = np.searchsorted(plan.owned_stops, tok_starts, side="right")
    last = np.searchsorted(plan.owned_starts, tok_stops, side="left")
    owns = (plan.owned_stops > plan.owned_starts).tolist()
    return [
        tuple(k for k in range(int(a), int(b)) if owns[k]) if e > s else ()
        for a, b, s, e in zip(first, last, tok_starts, tok_stops, strict=True)
    ]
