"""Run a sweep: every grid point through ``core.evaluate.run_eval``, one shared cache.

Each point is exactly the evaluation ``chunkscope eval`` runs for that policy (same
config, same chunks, same numbers); the sweep only adds what is shared between points:
each document is parsed once, and one ``VectorCache`` serves every point, so a span seen
at an earlier point is not re-encoded and late chunking's token states (which depend on
the document and the window policy, never on the chunk boundaries) are computed once per
document and pooled for every later point. The cost of each stored method is measured
per point (``MethodCost``) while its index step runs.

``progress(point, points, done, total)``: ``point`` is the 0-based point being run,
``done/total`` that point's (chunk, method) units. ``cancelled()`` is polled between
points and inside progress; when it turns true the sweep stops with ``SweepCancelled``,
whose ``sweep`` holds the points already finished (pass it as ``resume`` to go on).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from core import methods as registry
from core.chunk import chunk_document
from core.errors import ChunkscopeError
from core.evaluate.labels import LabelledQuery
from core.evaluate.run_file import model_fingerprint, queries_digest
from core.evaluate.runner import ChunkFn, EmbedFn, EvalConfig, run_eval
from core.formats import parse_document
from core.index.indexer import method_records
from core.provenance.types import Block, ChunkPolicy, Document
from core.tune.grid import GridPoint
from core.tune.sweep_records import ZERO_COST, MethodCost, Sweep, SweepPoint, sweep_id_of

SweepProgress = Callable[[int, int, int, int], None]
ParseFn = Callable[[Document], Sequence[Block]]


class SweepCancelled(ChunkscopeError):
    """The sweep was stopped; ``sweep`` holds the points finished before."""

    def __init__(self, sweep: Sweep) -> None:
        done = len(sweep.points)
        super().__init__(f"sweep stopped after {done} point(s); run it again to resume")
        self.sweep = sweep


class _Meter:
    """Wraps the embed step: per method, records made, forward tokens and seconds."""

    def __init__(self, embed: EmbedFn, encoder: Any) -> None:
        self.embed, self.costs = embed, dict[str, MethodCost]()
        self.tokens: int | None = 0 if callable(getattr(encoder, "forward", None)) else None

    def __call__(self, doc: Document, chunks: Any, method: str, encoder: Any, **kw: Any) -> Any:
        start, tokens = time.perf_counter(), self.tokens
        records = self.embed(doc, chunks, method, encoder, **kw)
        used = None if tokens is None or self.tokens is None else self.tokens - tokens
        cost = MethodCost(
            vectors=len(records), tokens_encoded=used, seconds=time.perf_counter() - start
        )
        self.costs[method] = self.costs[method] + cost if method in self.costs else cost
        return records

    @contextmanager
    def counting(self, encoder: Any) -> Iterator[None]:
        """Count the tokens of every forward pass (an instance attribute shadows the
        method, so the encoder's own calls to ``self.forward`` are counted too)."""
        if self.tokens is None:
            yield
            return
        original = encoder.forward

        def forward(rows: Sequence[Sequence[int]]) -> Any:
            self.tokens = (self.tokens or 0) + sum(len(r) for r in rows)
            return original(rows)

        encoder.forward = forward
        try:
            yield
        finally:
            del encoder.forward


def _parsed(parse: ParseFn | None) -> ParseFn:
    """``parse`` (default: the fast parser) memoised per document version."""
    done: dict[tuple[str, str], Sequence[Block]] = {}

    def blocks_of(doc: Document) -> Sequence[Block]:
        key = (doc.doc_id, doc.sha256)
        if key not in done:
            done[key] = parse(doc) if parse else parse_document(doc).blocks
        return done[key]

    return blocks_of


def _chunker(policy: ChunkPolicy, blocks_of: ParseFn, tokenizer: Any) -> ChunkFn:
    return lambda doc: chunk_document(doc, blocks_of(doc), policy, tokenizer)


def sweep_identity(
    queries: Sequence[LabelledQuery], docs: Sequence[Document], config: EvalConfig, encoder: Any
) -> dict[str, Any]:
    """Everything besides the policy that decides a point's numbers."""
    return {
        "model": str(encoder.name),
        "model_fingerprint": model_fingerprint(encoder),
        "methods": list(config.methods),
        "ks": list(config.ks),
        "scope": config.scope,
        "threshold": config.threshold,
        "seed": config.seed,
        "resamples": config.resamples,
        "corpus": {d.doc_id: d.sha256 for d in sorted(docs, key=lambda d: d.doc_id)},
        "queries_sha256": queries_digest(queries),
    }


@dataclass(slots=True)
class _Shared:
    """What every point of one sweep shares."""

    queries: Sequence[LabelledQuery]
    docs: Sequence[Document]
    template: EvalConfig
    encoder: Any
    embed: EmbedFn
    blocks_of: ParseFn
    tokenizer: Any
    cache: Any
    progress: SweepProgress | None
    stop: Callable[[], bool]


def run_sweep(
    queries: Sequence[LabelledQuery],
    docs: Sequence[Document],
    grid: Sequence[GridPoint],
    template: EvalConfig,
    *,
    encoder: Any,
    embed: EmbedFn | None = None,
    parse: ParseFn | None = None,
    tokenizer: Any = None,
    cache: Any = None,
    progress: SweepProgress | None = None,
    cancelled: Callable[[], bool] | None = None,
    resume: Sweep | None = None,
    on_point: Callable[[Sweep], object] | None = None,
) -> Sweep:
    """Evaluate every point of ``grid`` under ``template`` (its policy is replaced).

    ``resume``: a sweep of the same identity whose finished points are kept as they are.
    ``on_point(sweep)`` is called after every point (to save it as it grows).
    """
    if not grid:
        raise ChunkscopeError("the sweep has no point: give at least one size and overlap")
    identity = sweep_identity(queries, docs, template, encoder)
    meta = {"sweep_id": sweep_id_of(identity, [g.policy.key for g in grid]), "identity": identity}
    same = resume is not None and resume.identity == identity
    kept = {p.policy.key: p for p in resume.points} if resume is not None and same else {}
    shared = _Shared(
        queries=queries,
        docs=docs,
        template=template,
        encoder=encoder,
        embed=embed or method_records,
        blocks_of=_parsed(parse),
        tokenizer=tokenizer,
        cache=cache,
        progress=progress,
        stop=cancelled or (lambda: False),
    )
    points: list[SweepPoint] = []
    start = time.perf_counter()
    for i, item in enumerate(grid):
        if item.policy.key in kept:
            points.append(kept[item.policy.key])
            continue
        try:
            if shared.stop():
                raise _Stop
            points.append(_run_point(i, len(grid), item, shared))
        except _Stop:
            raise SweepCancelled(_assemble(meta, encoder, grid, points, start)) from None
        if on_point is not None:
            on_point(_assemble(meta, encoder, grid, points, start))
    return _assemble(meta, encoder, grid, points, start)


class _Stop(Exception):
    """Raised inside a progress callback to leave ``run_eval`` at once."""


def _run_point(index: int, total: int, item: GridPoint, shared: _Shared) -> SweepPoint:
    meter = _Meter(shared.embed, shared.encoder)

    def report(done: int, units: int) -> None:
        if shared.progress is not None:
            shared.progress(index, total, done, units)
        if shared.stop():
            raise _Stop

    config = replace(shared.template, policy=item.policy)
    with meter.counting(shared.encoder):
        run = run_eval(
            shared.queries,
            shared.docs,
            config,
            encoder=shared.encoder,
            embed=meter,
            chunker=_chunker(item.policy, shared.blocks_of, shared.tokenizer),
            cache=shared.cache,
            progress=report,
        )
    costs = {m: meter.costs.get(m, ZERO_COST) for m in registry.needs_indexing(config.methods)}
    return SweepPoint(policy=item.policy, overlap_asked=item.overlap_asked, run=run, costs=costs)


def _assemble(
    meta: dict[str, Any],
    encoder: Any,
    grid: Sequence[GridPoint],
    points: list[SweepPoint],
    start: float,
) -> Sweep:
    return Sweep(
        sweep_id=meta["sweep_id"],
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        model=str(encoder.name),
        identity=meta["identity"],
        grid={
            "policies": sorted({g.policy.name for g in grid}),
            "points": [g.policy.key for g in grid],
            "overlaps": sorted({g.overlap_asked for g in grid}),
        },
        points=tuple(points),
        timings={"total_s": round(time.perf_counter() - start, 3)},
    )
