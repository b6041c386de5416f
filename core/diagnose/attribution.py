"""What moved a vector: context attribution for one chunk and one query.

- **late**: the chunk's late vector is the mean of its tokens' states in the macro-window
  that owns most of them. Each sentence of that window outside the chunk is hidden in
  turn (its tokens get attention mask 0, so no token attends to them; positions are
  unchanged) and the chunk's vector is pooled again; ``delta = cosine(full) -
  cosine(hidden)`` is how much that sentence raised the chunk's cosine to the query
  (negative: it pulled the vector away).
- **contextual**: each word of the contextual prefix (title and heading path) is left out
  in turn and the text encoded again, the same delta.

Each is labelled with the registry's method whose vectors it takes apart: the windowed
one (late), the prefixed one (contextual).

Sentences come from ``core.chunk.sentence_bounds.sentence_spans`` over the window's text; every
span is a span of ``doc.text``. Masked variants run in batches of ``BATCH`` rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core import methods
from core.chunk.sentence_bounds import sentence_spans
from core.embed.contextual import contextual_prefix
from core.embed.late import document_tokens, late_windows
from core.methods.embedding import check_late_pooling
from core.provenance.types import Chunk, Document

BATCH = 8
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Influence:
    """One hidden part: its document span (prefix words: offsets into the prefix text,
    ``in_prefix=True``), the cosine without it, and ``delta`` (full minus hidden)."""

    char_start: int
    char_end: int
    text: str
    cosine: float
    delta: float
    in_prefix: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Attribution:
    method: str
    chunk_id: str
    cosine: float
    window: tuple[int, int]  # the window's character span (late), or the chunk's
    parts: tuple[Influence, ...]
    forward_rows: int


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))


def _forward(encoder: Any, ids: Sequence[int], masks: Sequence[np.ndarray]) -> np.ndarray:
    """Last hidden states ``(len(masks), L, dim)`` of one id row under several masks."""
    import torch

    rows = np.tile(np.asarray(ids, dtype=np.int64), (len(masks), 1))
    inputs = {
        "input_ids": torch.from_numpy(rows).to(encoder.device),
        "attention_mask": torch.from_numpy(np.stack(masks).astype(np.int64)).to(encoder.device),
    }
    if encoder.uses_token_types:
        inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
    with torch.inference_mode():
        states = encoder.model(**inputs).last_hidden_state
    encoder.forward_passes += len(masks)
    return states.float().cpu().numpy()


def late_attribution(
    doc: Document, chunk: Chunk, query: str, encoder: Any, *, progress: Progress | None = None
) -> Attribution:
    """How much each sentence of the chunk's window outside it moved its late cosine."""
    check_late_pooling(encoder)
    tokens = document_tokens(encoder, doc)
    mine = np.flatnonzero((tokens.starts < chunk.char_end) & (tokens.ends > chunk.char_start))
    windows = late_windows(doc, encoder)
    owner = max(
        windows,
        key=lambda w: int(((mine >= w.owned_token_start) & (mine < w.owned_token_end)).sum()),
    )
    lo, hi = owner.token_start, owner.token_end
    ids = encoder.specials.wrap(tokens.ids[lo:hi].tolist())
    skip = len(encoder.specials.prefix)
    positions = [skip + int(t - lo) for t in mine if lo <= t < hi]
    text = doc.text[owner.char_start : owner.char_end]
    sentences = [
        (owner.char_start + a, owner.char_start + b)
        for a, b in sentence_spans(text)
        if owner.char_start + b <= chunk.char_start or owner.char_start + a >= chunk.char_end
    ]
    qvec = np.asarray(encoder.encode_query(query), dtype=np.float64)
    full = np.ones(len(ids), dtype=np.int64)
    masks = [full]
    for a, b in sentences:
        hidden = full.copy()
        inside = np.flatnonzero((tokens.starts[lo:hi] < b) & (tokens.ends[lo:hi] > a))
        hidden[skip + inside] = 0
        masks.append(hidden)
    vectors = []
    for start in range(0, len(masks), BATCH):
        states = _forward(encoder, ids, masks[start : start + BATCH])
        vectors.extend(states[:, positions].mean(axis=1).astype(np.float64))
        if progress is not None:
            progress(min(start + BATCH, len(masks)), len(masks))
    base = _cos(vectors[0], qvec)
    parts = tuple(
        Influence(
            char_start=a, char_end=b, text=doc.text[a:b], cosine=_cos(v, qvec),
            delta=base - _cos(v, qvec),
        )
        for (a, b), v in zip(sentences, vectors[1:], strict=True)
    )  # fmt: skip
    return Attribution(
        method=methods.embedding_method(windowed=True).name, chunk_id=chunk.chunk_id, cosine=base,
        window=(owner.char_start, owner.char_end), parts=parts, forward_rows=len(masks),
    )  # fmt: skip


def contextual_attribution(
    doc: Document, chunk: Chunk, query: str, encoder: Any, *, progress: Progress | None = None
) -> Attribution:
    """How much each word of the contextual prefix moved the contextual cosine."""
    prefix = contextual_prefix(doc, chunk)
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", prefix)]
    body = chunk.encoder_text

    def text_without(skip: tuple[int, int] | None) -> str:
        kept = prefix if skip is None else prefix[: skip[0]] + prefix[skip[1] :]
        return f"{kept}\n\n{body}" if kept.strip() else body

    texts = [text_without(None), *(text_without(w) for w in words)]
    qvec = np.asarray(encoder.encode_query(query), dtype=np.float64)
    matrix = np.asarray(encoder.encode_texts(texts, progress=progress), dtype=np.float64)
    base = _cos(matrix[0], qvec)
    parts = tuple(
        Influence(
            char_start=a, char_end=b, text=prefix[a:b], cosine=_cos(v, qvec),
            delta=base - _cos(v, qvec), in_prefix=True,
        )
        for (a, b), v in zip(words, matrix[1:], strict=True)
    )  # fmt: skip
    return Attribution(
        method=methods.embedding_method(prefixed=True).name, chunk_id=chunk.chunk_id, cosine=base,
        window=(chunk.char_start, chunk.char_end), parts=parts, forward_rows=len(texts),
    )  # fmt: skip
