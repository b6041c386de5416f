"""Late chunking: run the model over the whole document, then pool each chunk's tokens.

The document is tokenised once (see ``token_spans.py`` for the character-to-token rule
and the macro-windows). Each macro-window is one forward pass of ``[specials]
window-tokens [specials]``; the special tokens (``[CLS]``/``[SEP]`` for BERT models) are
added per window and are *not* pooled: a chunk's vector is the mean of the final states of
its own content tokens, each taken from the one window that owns it, then L2-normalised.

A chunk with no token of its own (only characters the tokenizer drops, such as
whitespace) takes the state of the nearest token: the first token after its span, or
the document's last token when none follows; its ``token_count`` is 0. In a document with
no token at all, every chunk gets the vector of the empty text (the pooled special
tokens), as naive encoding would give it.

Only mean-pooled models are accepted: a CLS-pooled model was trained so that one
summary token carries the meaning, so an average of per-token states over a span is not
a vector it was trained to produce.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.embed.encoder import Encoder
from core.embed.records import ChunkVector, LateWindow
from core.embed.token_spans import (
    DocTokens,
    WindowPlan,
    plan_windows,
    token_spans,
    tokenize_document,
    windows_of_spans,
)
from core.errors import ModelError, PoolingError
from core.protocols import TextEncoder
from core.provenance.types import Chunk, Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.methods.spec import MethodSpec

Progress = Callable[[int, int], None]
DOC_TOKEN_CACHE_SIZE = 4
# Tokens per forward batch of windows, and per pooling block of cached states.
WINDOW_BATCH_TOKENS = 4096
POOL_BLOCK_TOKENS = 8192


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowPolicy:
    """Resolved macro-window sizes in content tokens (special tokens not counted)."""

    window: int
    stride: int
    margin: int

    @property
    def key(self) -> str:
        return f"w{self.window}-s{self.stride}-m{self.margin}"


def default_window(encoder: Encoder, doc_tokens: int | None = None) -> int:
    """A document that fits the model's positions is one window; a longer one is cut
    into windows of the model's own sequence limit.

    Late chunking exists to give each chunk the whole document as context, so a document
    of at most ``position_limit`` minus the specials (510 content tokens for
    all-MiniLM-L6-v2) runs in exactly one window of its own length. A longer document
    uses windows of the model's own sequence limit less its specials (254). That model is
    meant for at most 256 tokens and its token states degrade beyond that over long
    texts: on the shared corpus' labelled questions (state of the union, chat logs,
    wikitexts, all far longer than 510 tokens: 276 questions; fixed 400- and
    800-character chunks) late chunking with 254-token windows had a higher MRR than with
    510-token windows in all six settings (by 0.01 to 0.19). On the datasheet demo
    (311-412 tokens a document), one whole-document window is what lets every section
    see its product's name: see ``sample_docs/datasheets/README.md``.
    """
    if doc_tokens is not None and encoder.content_tokens < doc_tokens <= (
        encoder.content_position_limit
    ):
        return doc_tokens
    return encoder.content_tokens


def default_stride(window: int) -> int:
    """Windows overlap by an eighth (stride 223 of 254): a seam token keeps at least a
    sixteenth of a window of context on each side, and the extra forward work (about
    14 %) keeps late chunking within ~1.1x the time of naive encoding of the same spans.
    """
    return max(1, window - window // 8)


def default_margin(window: int) -> int:
    """Context a token needs on each side to count as "full": a quarter window."""
    return max(1, window // 4)


def window_policy(
    encoder: Encoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
    doc_tokens: int | None = None,
) -> WindowPolicy:
    """Validate and fill in window and stride; raises ModelError for impossible sizes.

    ``doc_tokens`` (the document's length in content tokens) lets the default window take
    in a whole document that fits the model's positions (see ``default_window``).
    """
    limit = encoder.content_position_limit
    window = default_window(encoder, doc_tokens) if window_tokens is None else int(window_tokens)
    if not 1 <= window <= limit:
        raise ModelError(f"--window must be between 1 and {limit} for {encoder.name}")
    stride = default_stride(window) if stride_tokens is None else int(stride_tokens)
    if not 1 <= stride <= window:
        raise ModelError(f"--stride must be between 1 and the window ({window})")
    return WindowPolicy(window=window, stride=stride, margin=default_margin(window))


def check_late_pooling(encoder: TextEncoder, *, instead: Sequence[str] = ()) -> None:
    """``PoolingError`` when ``encoder`` is not mean-pooled: late chunking's per-span
    averages are then not vectors it was trained to produce. ``instead`` names the
    methods the message offers in its place (``core.methods.embedding`` passes the
    registry's)."""
    if encoder.pooling != "mean":
        use = f"use --method {' or '.join(instead)}, or" if instead else "use"
        raise PoolingError(
            f"late chunking needs a mean-pooled model, but {encoder.name} pools the "
            f"{encoder.pooling.upper()} token: its per-span averages are not vectors it was "
            f"trained to produce; {use} a mean-pooled model"
        )


def document_tokens(encoder: Encoder, doc: Document) -> DocTokens:
    """The document tokenised once per encoder (a small LRU keyed by content)."""
    key = (doc.sha256, len(doc.text), hash(doc.text))
    cache = encoder.doc_token_cache
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    tokens = tokenize_document(encoder.tokenizer, encoder.prepare_offsets(doc.text))
    cache[key] = tokens
    while len(cache) > DOC_TOKEN_CACHE_SIZE:
        cache.popitem(last=False)
    return tokens


def late_windows(
    doc: Document,
    encoder: Encoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
) -> list[LateWindow]:
    """The macro-windows late chunking would run over ``doc``, with owned ranges."""
    tokens = document_tokens(encoder, doc)
    policy = window_policy(
        encoder, window_tokens=window_tokens, stride_tokens=stride_tokens, doc_tokens=len(tokens)
    )
    plan = plan_windows(len(tokens), policy.window, policy.stride, policy.margin)
    return [_late_window(k, plan, tokens) for k in range(plan.count)]


def _late_window(k: int, plan: WindowPlan, tokens: DocTokens) -> LateWindow:
    def chars(lo: int, hi: int) -> tuple[int, int]:
        if hi <= lo:
            at = int(tokens.starts[lo]) if lo < len(tokens) else 0
            return at, at
        return int(tokens.starts[lo]), int(tokens.ends[lo:hi].max())

    lo, hi = int(plan.starts[k]), int(plan.stops[k])
    own_lo, own_hi = int(plan.owned_starts[k]), int(plan.owned_stops[k])
    char_start, char_end = chars(lo, hi)
    owned_char_start, owned_char_end = chars(own_lo, own_hi)
    return LateWindow(
        index=k,
        token_start=lo,
        token_end=hi,
        owned_token_start=own_lo,
        owned_token_end=own_hi,
        char_start=char_start,
        char_end=char_end,
        owned_char_start=owned_char_start,
        owned_char_end=owned_char_end,
    )


def owned_state_blocks(
    encoder: Encoder, tokens: DocTokens, plan: WindowPlan, progress: Progress | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_token, states)``: owned token states, float32 ``(n, dim)``, in order.

    Windows run in batches (one forward pass each); specials are stripped before pooling.
    """
    import torch

    per_batch = max(1, WINDOW_BATCH_TOKENS // (plan.window + encoder.specials.count))
    skip = len(encoder.specials.prefix)
    done = 0
    if progress is not None:
        progress(0, plan.count)
    for first in range(0, plan.count, per_batch):
        batch = range(first, min(first + per_batch, plan.count))
        rows = [
            encoder.specials.wrap(tokens.ids[plan.starts[k] : plan.stops[k]].tolist())
            for k in batch
        ]
        states, _ = encoder.forward(rows)
        parts = []
        for row, k in enumerate(batch):
            lo = skip + int(plan.owned_starts[k] - plan.starts[k])
            hi = skip + int(plan.owned_stops[k] - plan.starts[k])
            parts.append(states[row, lo:hi])
        block = torch.cat(parts).float().cpu().numpy()
        yield int(plan.owned_starts[batch[0]]), block
        done += len(batch)
        if progress is not None:
            progress(done, plan.count)


def accumulate_span_sums(
    sums: np.ndarray, block_start: int, block: np.ndarray, starts: np.ndarray, stops: np.ndarray
) -> None:
    """Add each span's share of ``block`` (states of tokens from ``block_start``) to ``sums``.

    Uses a float64 running sum over the block, so a span costs two row lookups.
    """
    block_stop = block_start + block.shape[0]
    lo = np.clip(starts, block_start, block_stop)
    hi = np.clip(stops, block_start, block_stop)
    hit = np.flatnonzero(hi > lo)
    if hit.size == 0:
        return
    running = np.zeros((block.shape[0] + 1, block.shape[1]), dtype=np.float64)
    np.cumsum(block, axis=0, dtype=np.float64, out=running[1:])
    sums[hit] += running[hi[hit] - block_start] - running[lo[hit] - block_start]


def _pool_ranges(
    tokens: DocTokens, tok_starts: np.ndarray, tok_stops: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Token ranges to average: a chunk without tokens borrows its nearest token."""
    n = len(tokens)
    empty = tok_stops <= tok_starts
    nearest = np.minimum(tok_starts, n - 1)
    return np.where(empty, nearest, tok_starts), np.where(empty, nearest + 1, tok_stops)


def late_vectors(
    doc: Document,
    chunks: Sequence[Chunk],
    encoder: Encoder,
    policy: WindowPolicy,
    *,
    method: str,
    progress: Progress | None = None,
    states: np.ndarray | None = None,
    keep_states: bool = False,
) -> tuple[list[ChunkVector], np.ndarray | None]:
    """Late vectors of ``chunks`` (same order, labelled ``method``); returns them and the
    owned token states.

    ``states`` (float32 or float16 ``(n_tokens, dim)``, from an earlier call with the same
    policy) skips the forward passes (states of another shape are ignored);
    ``keep_states`` returns the states for such reuse.
    """
    check_late_pooling(encoder)
    tokens = document_tokens(encoder, doc)
    if len(tokens) == 0:
        return _vectors_without_tokens(chunks, encoder, method), None
    if states is not None and states.shape != (len(tokens), encoder.dim):
        states = None  # not this document's states: never pool from them
    char_starts = np.array([c.char_start for c in chunks], dtype=np.int64)
    char_ends = np.array([c.char_end for c in chunks], dtype=np.int64)
    tok_starts, tok_stops = token_spans(tokens, char_starts, char_ends)
    pool_starts, pool_stops = _pool_ranges(tokens, tok_starts, tok_stops)
    plan = plan_windows(len(tokens), policy.window, policy.stride, policy.margin)
    sums = np.zeros((len(chunks), encoder.dim), dtype=np.float64)
    kept: np.ndarray | None
    if states is not None:
        for lo in range(0, states.shape[0], POOL_BLOCK_TOKENS):
            block = states[lo : lo + POOL_BLOCK_TOKENS]
            accumulate_span_sums(sums, lo, block, pool_starts, pool_stops)
        kept = states
    else:
        blocks = []
        for lo, block in owned_state_blocks(encoder, tokens, plan, progress):
            accumulate_span_sums(sums, lo, block, pool_starts, pool_stops)
            if keep_states:
                blocks.append(block)
        kept = np.concatenate(blocks) if keep_states else None
    means = sums / (pool_stops - pool_starts)[:, None]
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    vectors = (means / np.maximum(norms, 1e-12)).astype(np.float32)
    records = _records(
        method, chunks, vectors, plan, tok_starts, tok_stops, pool_starts, pool_stops
    )
    return records, kept


def _records(
    method: str,
    chunks: Sequence[Chunk],
    vectors: np.ndarray,
    plan: WindowPlan,
    tok_starts: np.ndarray,
    tok_stops: np.ndarray,
    pool_starts: np.ndarray,
    pool_stops: np.ndarray,
) -> list[ChunkVector]:
    full_running = np.concatenate([[0], np.cumsum(plan.full_context, dtype=np.int64)])
    full_counts = full_running[tok_stops] - full_running[tok_starts]
    pooled_full = full_running[pool_stops] - full_running[pool_starts]
    windows = windows_of_spans(plan, pool_starts, pool_stops)
    out = []
    for i, chunk in enumerate(chunks):
        count = int(tok_stops[i] - tok_starts[i])
        all_full = pooled_full[i] == pool_stops[i] - pool_starts[i]
        out.append(
            ChunkVector(
                chunk_id=chunk.chunk_id,
                method=method,
                vector=vectors[i],
                token_count=count,
                truncated_tokens=0,
                windows=windows[i],
                context="full" if all_full else "partial",
                full_context_tokens=int(full_counts[i]),
            )
        )
    return out


def _vectors_without_tokens(
    chunks: Sequence[Chunk], encoder: Encoder, method: str
) -> list[ChunkVector]:
    empty = encoder.encode_ids([[]])[0]
    return [
        ChunkVector(
            chunk_id=c.chunk_id,
            method=method,
            vector=empty.copy(),
            token_count=0,
            windows=(0,),
            context="full",
        )
        for c in chunks
    ]


def window_variant(doc: Document, chunk: Chunk, policy: WindowPolicy | None) -> str:
    """The window policy's key: a late vector pools the document's own token states, so
    only the windows change it (a prefix or a table's header rows are never read)."""
    if policy is None:
        raise ValueError("a late vector's cache variant needs its window policy")
    return policy.key


def late_chunk_vectors(
    spec: MethodSpec,
    doc: Document,
    chunks: Sequence[Chunk],
    encoder: Encoder,
    *,
    policy: WindowPolicy | None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """``late_vectors`` labelled ``spec.name``; with a ``cache``, the document's token
    states are read from it when it has them under ``policy``, and kept in it when not."""
    if policy is None:
        raise ValueError("late vectors need a resolved window policy")
    shape = (len(document_tokens(encoder, doc)), encoder.dim)
    # ``is not None``: an empty VectorCache is falsy (it has a length), yet may hold states.
    states = (
        None
        if cache is None
        else cache.get_states(encoder.identity, doc.sha256, policy.key, shape=shape)
    )
    records, kept = late_vectors(
        doc,
        chunks,
        encoder,
        policy,
        method=spec.name,
        progress=progress,
        states=states,
        keep_states=cache is not None and states is None,
    )
    if cache is not None and kept is not None:
        cache.put_states(encoder.identity, doc.sha256, policy.key, kept)
    return records
