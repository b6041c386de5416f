"""What a retrieval method is: a named index step and a score over the *same* chunk spans.

Every method ranks the chunks a policy made; methods differ only in how they score a
query against a chunk. A method's ``score`` says what its numbers are, so a chart or a
table labels them truthfully (a cosine in [-1, 1], an unbounded BM25 score, a fused score
of ranks). Families:

- ``dense``: one stored vector per chunk, scored by cosine against one query vector (a
  built-in one says, in its ``embedding``, how ``core.embed`` computes and caches it);
- ``lexical``: a term index over the chunk text (and what the method prefixes to it),
  scored by BM25;
- ``fused``: no index of its own; fuses the rankings of its ``parts``;
- ``external``: a retriever that ran elsewhere (``core.evaluate.traces``): its ranking of
  each labelled query comes from the log of what it returned, so it has no index and
  ranks nothing beyond the log's depth.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from core.errors import ChunkscopeError

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.embed.encoder import Encoder
    from core.embed.late import WindowPolicy
    from core.embed.records import ChunkVector
    from core.protocols import TextEncoder
    from core.provenance.types import Chunk, Document

Family = Literal["dense", "lexical", "fused", "external"]


class UnknownMethodError(ChunkscopeError):
    """A method name that is neither registered nor a well-formed fusion."""


Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreScale:
    """What a method's scores mean: ``kind`` is a short machine name (``cosine``,
    ``bm25``, ``rrf``, ``wsum``), ``label`` the axis/column label, ``short`` the label
    beside a score in a card, ``low``/``high`` the bounds when the scale has them (None:
    unbounded on that side)."""

    kind: str
    label: str
    short: str
    low: float | None = None
    high: float | None = None

    def format(self, value: float) -> str:
        """A score as shown in a card or a table cell."""
        return f"{value:.4f}" if self.kind in ("rrf", "wsum") else f"{value:.3f}"


COSINE = ScoreScale(kind="cosine", label="cosine", short="cos", low=-1.0, high=1.0)
BM25 = ScoreScale(kind="bm25", label="BM25 score", short="BM25", low=0.0)
THEIRS = ScoreScale(kind="theirs", label="their score", short="score")
THEIR_RANK = ScoreScale(kind="their-rank", label="1 / their rank (no scores logged)",
                        short="1/rank", low=0.0, high=1.0)  # fmt: skip


class IndexStep(Protocol):
    """One record per chunk, in the order given: what the store keeps for this method."""

    def __call__(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        encoder: TextEncoder,
        *,
        progress: Progress | None = None,
        cache: VectorCache | None = None,
    ) -> list[ChunkVector]: ...


class VectorFunction(Protocol):
    """The vectors of ``chunks`` (one record per chunk, in the order given, labelled
    ``spec.name``); ``policy`` is the resolved macro-window policy of a windowed method
    (None otherwise); with a ``cache``, it may keep or reuse what it computed on the way
    (late chunking's token states): ``core.embed`` itself looks up and stores the vectors."""

    def __call__(
        self,
        spec: MethodSpec,
        doc: Document,
        chunks: Sequence[Chunk],
        encoder: Encoder,
        *,
        policy: WindowPolicy | None,
        progress: Progress | None,
        cache: VectorCache | None,
    ) -> list[ChunkVector]: ...


class VariantRule(Protocol):
    """What besides the model, the method and the span decides a chunk's vector: the
    ``variant`` of its cache key. Stored vectors are found again only while it returns the
    same string for the same input."""

    def __call__(self, doc: Document, chunk: Chunk, policy: WindowPolicy | None) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DenseEmbedding:
    """How ``core.methods.embedding.embed_chunks`` computes and caches a dense method's vectors.

    ``windowed``: the vectors pool a whole document's token states over macro-windows
    (late chunking), so a window policy is resolved and passed to ``vectors`` and
    ``variant``, and the embed command reports the windows. ``prefixed``: the encoder
    reads the contextual prefix (title and heading path) before the chunk's text, which
    is what the prefix attribution leaves out word by word.
    """

    vectors: VectorFunction
    variant: VariantRule
    windowed: bool = False
    prefixed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodSpec:
    """One registered method (see the module docstring).

    ``order`` sorts methods from simpler to more elaborate: evaluation deltas are "more
    elaborate minus simpler". ``needs_mean_pooling`` marks methods that pool token states
    themselves (late chunking), refused on CLS-pooled models. ``index`` is None for fused
    methods, whose ``parts`` are indexed instead. ``embedding`` (dense methods only) is
    how ``core.embed`` makes the vectors; a dense method without one (a test's toy) has
    only its own ``index`` step.
    """

    name: str
    family: Family
    score: ScoreScale
    summary: str
    colour: str
    order: int
    index: IndexStep | None = None
    parts: tuple[str, ...] = ()
    needs_mean_pooling: bool = False
    params: dict[str, float] = field(default_factory=dict)
    progress_unit: str = "chunks"  # what its index step's progress counts
    embedding: DenseEmbedding | None = None

    def __post_init__(self) -> None:
        if not self.name or any(ch.isspace() for ch in self.name):
            raise ValueError(f"a method name needs characters and no spaces: {self.name!r}")
        if (self.family in ("fused", "external")) != (self.index is None):
            raise ValueError(
                f"method {self.name}: fused and external methods, and only they, have no index"
            )
        if self.family == "fused" and len(self.parts) < 2:
            raise ValueError(f"method {self.name}: a fusion needs at least two parts")
        if self.embedding is not None and self.family != "dense":
            raise ValueError(f"method {self.name}: only a dense method has an embedding")

    @property
    def stored(self) -> bool:
        """True when the method keeps records of its own in the store."""
        return self.index is not None

    @property
    def indexed_parts(self) -> tuple[str, ...]:
        """The stored methods this method needs: itself, its parts, or none (external)."""
        if self.family == "external":
            return ()
        return self.parts if self.family == "fused" else (self.name,)
