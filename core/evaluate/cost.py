"""What an evaluation will cost before it starts: texts to embed, tokens, expected time.

Counted exactly from the run's own chunks and the cache it will use: a chunk encoded alone
(``naive``, ``contextual``) whose vector is not cached is one text of its own tokens
(truncated as the encoder truncates, special tokens included); a late-chunked document
with any chunk not cached, and no token states kept, costs its macro-windows (one text
each). Lexical methods encode nothing. The time is the tokens over the encoder's measured
rate (``Encoder.forward_tokens / forward_seconds`` once it has run a little, else one
probe batch), so "about" is meant: attention grows a little faster than the tokens.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import methods as registry
from core.embed import Encoder
from core.embed.late import late_windows
from core.evaluate.corpus import ChunkFn, build_corpus
from core.evaluate.runner import EvalConfig, default_chunker
from core.methods.embedding import encodes_texts_alone, uncached_chunks
from core.provenance.types import Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.protocols import TextEncoder

# the probe batch when the encoder has not run yet: shaped as a run's batches are (32 rows
# of a chunk's length), after a warm-up pass; a cold batch of 8 long rows ran at a third
# of the rate a sweep then measured, and the estimate said three times the time
PROBE_ROWS, PROBE_TOKENS = 32, 128
MEASURED_TOKENS = 4096  # tokens run before the encoder's own history is trusted


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalCost:
    """``texts`` sequences of ``tokens`` tokens to encode, for ``vectors`` vectors of which
    ``cached`` are read back; ``seconds`` at ``tokens_per_s`` (None: rate unknown)."""

    texts: int
    tokens: int
    vectors: int
    cached: int
    chunks: int
    seconds: float | None
    tokens_per_s: float | None

    def sentence(self) -> str:
        """``about 3 min: 2,193 texts to embed`` (or why nothing is)."""
        if self.texts == 0:
            if self.vectors:
                return f"a few seconds: all {self.vectors:,} vectors are cached"
            return "a few seconds: nothing to embed"
        what = f"{self.texts:,} texts to embed"
        if self.cached:
            what += f" ({self.cached:,} of {self.vectors:,} vectors cached)"
        return f"about {duration(self.seconds)}: {what}" if self.seconds is not None else what


def duration(seconds: float | None) -> str:
    """``40 s``, ``3 min``, ``1 h 5 min``: rounded as an estimate should be."""
    if seconds is None:
        return "an unknown time"
    if seconds < 60:
        return f"{max(5, round(seconds / 5) * 5)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def encoder_rate(encoder: Any) -> float | None:
    """Tokens per second of ``encoder``'s forward passes: its own history once it has run
    ``MEASURED_TOKENS``, else one probe batch; None for an encoder without token ids."""
    if not isinstance(encoder, Encoder):
        return None
    if encoder.forward_tokens < MEASURED_TOKENS or encoder.forward_seconds <= 0:
        words = encoder.content_ids(["the cost of a first look " * PROBE_TOKENS])[0]
        filler = encoder.specials.wrap(words[: PROBE_TOKENS - encoder.specials.count])
        encoder.forward([filler[:16]])  # warm-up: the first pass pays for thread start-up
        started = time.perf_counter()
        encoder.forward([filler] * PROBE_ROWS)
        return PROBE_ROWS * len(filler) / max(time.perf_counter() - started, 1e-6)
    return encoder.forward_tokens / encoder.forward_seconds


def estimate_cost(
    docs: Sequence[Document],
    config: EvalConfig,
    *,
    encoder: TextEncoder,
    cache: VectorCache | None,
    chunker: ChunkFn | None = None,
    rate: float | None = None,
    states_counted: set[tuple[str, str]] | None = None,
) -> EvalCost:
    """The cost of ``run_eval(queries, docs, config, ...)`` with this ``cache`` (see the
    module docstring); ``rate`` (tokens per second) defaults to ``encoder_rate``.
    ``states_counted``: (document hash, window policy) whose late forward passes an
    earlier estimate of the same sweep already counted (a sweep runs them once); grown."""
    corpus = build_corpus(docs, chunker or default_chunker(config.policy))
    texts = tokens = vectors = cached = 0
    for method in registry.needs_indexing(config.methods):
        if registry.get(method).embedding is None:
            continue  # lexical: counts words, encodes nothing
        for doc, chunks in corpus.chunks_by_doc:
            missing, policy = uncached_chunks(doc, chunks, method, encoder, cache)
            vectors += len(chunks)
            cached += len(chunks) - len(missing)
            if not missing:
                continue
            if encodes_texts_alone(method) or not isinstance(encoder, Encoder):
                texts += len(missing)
                tokens += _alone_tokens(encoder, [c.encoder_text for c in missing])
            elif _needs_states(encoder, doc, policy, cache, states_counted):
                windows = late_windows(doc, encoder)
                texts += len(windows)
                tokens += sum(w.n_tokens + encoder.specials.count for w in windows)
    speed = rate if rate is not None else encoder_rate(encoder)
    return EvalCost(
        texts=texts, tokens=tokens, vectors=vectors, cached=cached, chunks=len(corpus.chunks),
        seconds=tokens / speed if speed and tokens else (0.0 if not texts else None),
        tokens_per_s=speed,
    )  # fmt: skip


def _alone_tokens(encoder: Any, texts: Sequence[str]) -> int:
    if not isinstance(encoder, Encoder):
        return 0
    keep, specials = encoder.content_tokens, encoder.specials.count
    return sum(min(len(ids), keep) + specials for ids in encoder.content_ids(texts))


def _needs_states(
    encoder: Encoder,
    doc: Document,
    policy: Any,
    cache: VectorCache | None,
    counted: set[tuple[str, str]] | None,
) -> bool:
    """Whether the run will pass ``doc`` through the model for late chunking."""
    if policy is None or cache is None:
        return True
    key = (doc.sha256, policy.key)
    if counted is not None and key in counted:
        return False
    if counted is not None:
        counted.add(key)
    return not cache.holds_states(encoder.identity, doc.sha256, policy.key)


def add_costs(costs: Sequence[EvalCost]) -> EvalCost:
    """The costs of several runs in a row (a sweep's points) as one."""
    rate = next((c.tokens_per_s for c in costs if c.tokens_per_s), None)
    tokens = sum(c.tokens for c in costs)
    texts = sum(c.texts for c in costs)
    return EvalCost(
        texts=texts, tokens=tokens, vectors=sum(c.vectors for c in costs),
        cached=sum(c.cached for c in costs), chunks=sum(c.chunks for c in costs),
        seconds=tokens / rate if rate and tokens else (0.0 if not texts else None),
        tokens_per_s=rate,
    )  # fmt: skip


def progress_line(done: int, total: int, elapsed_s: float, what: str = "Embedding") -> str:
    """``Embedding: 412 of 2,193 chunk × method units · 40 s so far · about 3 min left``
    (the units of ``run_eval``'s progress; time left scales the time so far by the share
    still to do, none before the first unit is done)."""
    share = done / total if total else 1.0
    line = (
        f"{what}: {done:,} of {total:,} chunk × method units · {duration_so_far(elapsed_s)} so far"
    )
    if 0 < share < 1:
        line += f" · about {duration(elapsed_s * (1 - share) / share)} left"
    return line


def duration_so_far(seconds: float) -> str:
    """``7 s``, ``2 min 05 s``: a measured time, to the second."""
    whole = max(0, round(seconds))
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"
