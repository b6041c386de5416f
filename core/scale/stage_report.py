"""What a Ray index run did, per stage, from the seconds each row carries.

A stage's ``worker_s`` is the sum over its rows of the time one worker spent on that row
(wall time inside the task or actor call), so ``tokens / worker_s`` is the rate of one
worker, and ``tokens / pipeline_s`` the rate of the whole run (stages overlap).
Tokens are the chunks' own token counts (the encoder's tokenizer), once per dense method
(a lexical method's records need no model: its rows count chunks, not tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core import methods as registry
from core.index.indexer import IndexReport


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStat:
    """One stage: ``items`` rows (documents for parse, (document, method) pairs after),
    ``chunks`` and ``tokens`` through it, ``worker_s`` seconds of worker time; ``cached``:
    the records an embed actor took from its vector cache instead of encoding."""

    stage: str
    items: int
    chunks: int
    tokens: int
    worker_s: float
    cached: int = 0

    @property
    def tokens_per_worker_s(self) -> float:
        return self.tokens / self.worker_s if self.worker_s > 0 else 0.0

    def line(self) -> str:
        rate = f", {self.tokens_per_worker_s:,.0f} tokens/s per worker" if self.tokens else ""
        cached = f" ({self.cached:,} records from the vector cache)" if self.cached else ""
        return (
            f"{self.stage}: {self.items} items, {self.chunks:,} chunks{cached} in "
            f"{self.worker_s:.1f} worker-s{rate}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RayIndexReport:
    """The plain ``IndexReport`` plus the stages; ``pipeline_s`` is the wall time from
    the first task to the last written row (cluster start and planning excluded)."""

    report: IndexReport
    stages: tuple[StageStat, ...]
    workers: int
    pipeline_s: float
    resources: dict[str, float] = field(default_factory=dict)

    @property
    def embedded_tokens(self) -> int:
        return sum(s.tokens for s in self.stages if s.stage == "embed")

    def summary_lines(self) -> list[str]:
        lines = [s.line() for s in self.stages]
        if self.pipeline_s > 0:
            rate = self.embedded_tokens / self.pipeline_s
            cpus = self.resources.get("CPU", 0)
            gpus = self.resources.get("GPU", 0)
            lines.append(
                f"pipeline: {self.pipeline_s:.1f} s wall, {rate:,.0f} tokens/s with "
                f"{self.workers} embed worker(s) on a cluster of {cpus:g} CPU, {gpus:g} GPU"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "pipeline_s": round(self.pipeline_s, 3),
            "workers": self.workers,
            "resources": self.resources,
            "stages": [
                {
                    "stage": s.stage,
                    "items": s.items,
                    "chunks": s.chunks,
                    "tokens": s.tokens,
                    "worker_s": round(s.worker_s, 3),
                    "cached": s.cached,
                    "tokens_per_worker_s": round(s.tokens_per_worker_s, 1),
                }
                for s in self.stages
            ],
        }


def stage_stats(rows: Sequence[dict[str, Any]]) -> tuple[StageStat, ...]:
    """Parse counted once per document; embed and store once per (document, method)."""
    parsed = {r["doc_id"]: r for r in rows if r["n_chunks"] >= 0}
    done = [r for r in rows if r["method"] and not r["error"]]
    dense = [r for r in done if registry.get(r["method"]).family == "dense"]
    return (
        StageStat(
            stage="parse",
            items=len(parsed),
            chunks=sum(int(r["n_chunks"]) for r in parsed.values()),
            tokens=0,
            worker_s=sum(float(r["parse_s"]) for r in parsed.values()),
        ),
        StageStat(
            stage="embed",
            items=len(done),
            chunks=sum(int(r["n_chunks"]) for r in done),
            tokens=sum(int(r["n_tokens"]) for r in dense),
            worker_s=sum(float(r["embed_s"]) for r in done),
            cached=sum(int(r.get("cached", 0)) for r in done),
        ),
        StageStat(
            stage="store",
            items=len(done),
            chunks=sum(int(r["n_chunks"]) for r in done),
            tokens=0,
            worker_s=sum(float(r["store_s"]) for r in done),
        ),
    )
