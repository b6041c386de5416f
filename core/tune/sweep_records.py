"""Sweep records: one evaluation run per (policy, size, overlap) point, with index costs.

A sweep file is one UTF-8 JSON object (``SWEEP_FORMAT``): the identity of everything
that decides its numbers besides the policy (model, methods, ks, scope, threshold,
bootstrap seed and resamples, every document's sha256, the query set's hash), the grid
asked for, and per point the full ``EvalRun`` (hits included, so a cell's failures can be
read) and the cost of each stored method. A point is reused by a resumed sweep only when
the identity matches.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import methods as registry
from core.chunk.policy_registry import policy_from_dict
from core.errors import LabelError
from core.evaluate.run_file import EvalRun
from core.evaluate.triage import default_triage_path
from core.provenance.serial import Fields, as_float, as_stored
from core.provenance.types import ChunkPolicy

SWEEP_FORMAT = 1
SWEEP_KIND = "chunkscope-sweep"


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodCost:
    """What indexing one method cost at one point.

    ``vectors``: records made (one a chunk); ``tokens_encoded``: tokens (specials
    included) that went through the encoder's forward passes while indexing, ``None``
    when the encoder does not expose its passes (a lexical method encodes 0);
    ``seconds``: wall time of the method's index step over all documents. A late point
    whose token states came from the state cache encodes 0 tokens: it only pooled.
    """

    vectors: int
    tokens_encoded: int | None
    seconds: float

    def __add__(self, other: MethodCost) -> MethodCost:
        tokens = (
            None
            if self.tokens_encoded is None or other.tokens_encoded is None
            else self.tokens_encoded + other.tokens_encoded
        )
        return MethodCost(
            vectors=self.vectors + other.vectors,
            tokens_encoded=tokens,
            seconds=self.seconds + other.seconds,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "vectors": self.vectors,
            "tokens_encoded": self.tokens_encoded,
            "seconds": round(self.seconds, 4),
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "cost") -> MethodCost:
        fields = Fields(data, where)
        return cls(
            vectors=fields.integer("vectors"),
            tokens_encoded=fields.optional_integer("tokens_encoded"),
            seconds=fields.number("seconds"),
        )


ZERO_COST = MethodCost(vectors=0, tokens_encoded=0, seconds=0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint:
    """One policy of the grid: its run and the cost of each stored method."""

    policy: ChunkPolicy
    overlap_asked: str
    run: EvalRun
    costs: Mapping[str, MethodCost]

    def cost_of(self, method: str) -> MethodCost:
        """A stored method's own cost; a fusion's is the sum of its parts'."""
        if method in self.costs:
            return self.costs[method]
        total = ZERO_COST
        for part in registry.needs_indexing((method,)):
            total = total + self.costs.get(part, ZERO_COST)
        return total

    def to_dict(self) -> dict[str, object]:
        return {
            "policy": self.policy.to_dict() | {"key": self.policy.key},
            "overlap_asked": self.overlap_asked,
            "costs": {m: c.to_dict() for m, c in self.costs.items()},
            "run": self.run.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "point") -> SweepPoint:
        fields = Fields(data, where)
        policy = fields.mapping_of("policy", as_stored)
        policy.pop("key", None)
        return cls(
            policy=policy_from_dict(policy),
            overlap_asked=fields.string("overlap_asked"),
            run=EvalRun.from_dict(fields.raw("run"), fields.path("run")),
            costs=fields.mapping_of("costs", MethodCost.from_dict),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One (point, method): the run's means, query counts and the method's cost."""

    policy: ChunkPolicy
    overlap_asked: str
    method: str
    metrics: Mapping[str, float | None]
    n: Mapping[str, int]
    cost: MethodCost
    run_id: str

    @property
    def label(self) -> str:
        return f"{self.policy.key} · {self.method}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Sweep:
    """A finished (or partly finished) sweep; ``points`` in grid order."""

    sweep_id: str
    created_at: str
    model: str
    identity: Mapping[str, Any]
    grid: Mapping[str, Any]
    points: tuple[SweepPoint, ...]
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.identity["methods"])

    def cells(self) -> list[Cell]:
        return [
            Cell(
                policy=p.policy,
                overlap_asked=p.overlap_asked,
                method=m,
                metrics=p.run.metrics[m],
                n=p.run.n[m],
                cost=p.cost_of(m),
                run_id=p.run.run_id,
            )
            for p in self.points
            for m in p.run.methods
        ]

    def point(self, policy_key: str) -> SweepPoint:
        for p in self.points:
            if p.policy.key == policy_key:
                return p
        raise LabelError(f"policy {policy_key!r} is not in sweep {self.sweep_id}")

    def to_dict(self) -> dict[str, object]:
        return {
            "format": SWEEP_FORMAT,
            "kind": SWEEP_KIND,
            "sweep_id": self.sweep_id,
            "created_at": self.created_at,
            "model": self.model,
            "identity": dict(self.identity),
            "grid": dict(self.grid),
            "timings": dict(self.timings),
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "sweep") -> Sweep:
        fields = Fields(data, where)
        return cls(
            sweep_id=fields.string("sweep_id"),
            created_at=fields.string("created_at"),
            model=fields.string("model"),
            identity=fields.mapping_of("identity", as_stored),
            grid=fields.mapping_of("grid", as_stored),
            points=tuple(fields.list_of("points", SweepPoint.from_dict)),
            timings=fields.mapping_of("timings", as_float, required=False),
        )


def sweep_id_of(identity: Mapping[str, Any], keys: Sequence[str]) -> str:
    """``sweep-`` + 16 hex digits of the sha256 of the identity and the grid's policy keys."""
    raw = json.dumps({"identity": identity, "policies": list(keys)}, sort_keys=True)
    return "sweep-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


SWEEPS_DIRNAME = "sweeps"


def store_sweeps_dir() -> Path:
    """``sweeps/`` in the store folder (``$CHUNKSCOPE_STORE``, else ``./.chunkscope``):
    where ``chunkscope sweep`` keeps every sweep it runs and the Tune page lists them."""
    return default_triage_path().parent / SWEEPS_DIRNAME


def save_sweep(sweep: Sweep, path: str | os.PathLike[str]) -> Path:
    """Write the sweep as UTF-8 JSON (through a temporary file, so a reader never sees half)."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(sweep.to_dict(), ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, file)
    return file


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read a sweep saved by ``save_sweep``; a missing or foreign file is a ``LabelError``."""
    file = Path(path)
    if not file.is_file():
        raise LabelError(f"sweep file {file} not found: pass a file written by `sweep --out`")
    try:
        data = json.loads(file.read_text("utf-8"))
        if not isinstance(data, dict) or data.get("kind") != SWEEP_KIND:
            raise ValueError("no sweep kind")
        if int(data.get("format", 0)) > SWEEP_FORMAT:
            raise LabelError(
                f"{file} was written in sweep format {data['format']}, newer than this "
                f"Chunkscope's ({SWEEP_FORMAT}): upgrade Chunkscope to read it"
            )
        return Sweep.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise LabelError(
            f"{file} is not a Chunkscope sweep file ({exc}): re-run sweep --out"
        ) from exc
