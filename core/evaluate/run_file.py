"""Evaluation runs as records: per-query results, means, deltas, saved as JSON.

A run is identified by ``run_id``: a hash of everything that decides its numbers (model,
policy, methods, ks, scope, resolution threshold, bootstrap seed and resamples, the query
set's hash and every document's sha256). The same inputs give the same ``run_id`` and the
same numbers; ``created_at`` and ``timings`` are the only fields that differ between two
runs of the same command.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

from core import methods
from core.errors import LabelError
from core.evaluate.bootstrap import DeltaInterval
from core.evaluate.labels import GoldSpan, LabelledQuery, query_from_dict
from core.evaluate.resolve import Unresolved
from core.methods.spec import MethodSpec
from core.provenance.cite import Citation
from core.provenance.serial import (
    Fields,
    RecordError,
    as_bool,
    as_float,
    as_int,
    as_stored,
    as_str,
    list_reader,
    mapping_reader,
    optional,
)

# 2: a hit's "cosine" became "score" (on its method's own scale); format 1 reads as 2.
RUN_FORMAT = 2
Values = Mapping[str, float | None]
_VALUES = mapping_reader(optional(as_float))


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedHit:
    """One retrieved chunk: 1-based ``rank`` and ``score`` on its method's scale (a cosine,
    a BM25 score, a fused score); its citation is ``EvalRun.chunks[chunk_id]`` (stored
    once per run, however often it is retrieved)."""

    chunk_id: str
    rank: int
    score: float

    def to_dict(self) -> dict[str, object]:
        return {"chunk_id": self.chunk_id, "rank": self.rank, "score": round(self.score, 6)}

    @classmethod
    def from_dict(cls, data: object, where: str = "hit") -> RankedHit:
        fields = Fields(data, where)
        return cls(
            chunk_id=fields.string("chunk_id"),
            rank=fields.integer("rank"),
            score=fields.number("score" if "score" in fields else "cosine"),
        )

    @classmethod
    def read(cls, data: object, where: str) -> RankedHit:
        return cls.from_dict(data, where)


_HITS = list_reader(RankedHit.read)


@dataclass(frozen=True, slots=True, kw_only=True)
class Suggestion:
    """The cause the diagnosis (``core.diagnose``) suggests for one failure under one
    method, how sure it is (``strong``, ``weak``, ``unclear``), the close runner-up ('' when
    none), what decided it, and the experiments it rests on (``experiments``: each repair
    tried, as ``core.diagnose.repairs.Experiment.to_dict`` writes it: ``repair``,
    ``before``, ``after``, ``fixes``, ``line``, ...; empty in runs written before them)."""

    cause: str
    confidence: str
    runner_up: str = ""
    decided_by: str = ""
    experiments: tuple[Mapping[str, object], ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "cause": self.cause,
            "confidence": self.confidence,
            "runner_up": self.runner_up,
            "decided_by": self.decided_by,
        }
        if self.experiments:
            out["experiments"] = [dict(e) for e in self.experiments]
        return out

    @classmethod
    def read(cls, data: object, where: str) -> Suggestion:
        fields = Fields(data, where)
        found = data.get("experiments", []) if isinstance(data, Mapping) else []
        if not isinstance(found, list) or not all(isinstance(e, Mapping) for e in found):
            raise RecordError(f"{where}.experiments: expected a list of objects")
        return cls(
            cause=fields.string("cause"),
            confidence=fields.string("confidence"),
            runner_up=fields.string("runner_up") if "runner_up" in fields else "",
            decided_by=fields.string("decided_by") if "decided_by" in fields else "",
            experiments=tuple(dict(e) for e in found),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryRecord:
    """One query's outcome under every method.

    ``ranks[m]`` is the 1-based rank of the first gold-overlapping chunk within the run's
    depth, ``None`` if none was retrieved that deep; ``failed[m]`` is true when no gold
    chunk is in the top ``text_k``; ``top[m]`` holds the ranked hits up to the depth.
    ``full_ranks[m]`` is that rank at full depth, among the ``scope_size`` chunks the
    query was ranked against (None when no gold chunk exists; absent in older runs).
    ``suggested[m]`` is the diagnosis's suggested cause of a failure under ``m`` (written by
    ``eval --out``; absent in older runs and for methods that did not fail).
    """

    id: str
    query: str
    doc_id: str
    doc_sha256: str
    gold: tuple[GoldSpan, ...]
    ranks: Mapping[str, int | None]
    failed: Mapping[str, bool]
    metrics: Mapping[str, Values]
    top: Mapping[str, tuple[RankedHit, ...]] = field(default_factory=dict)
    full_ranks: Mapping[str, int | None] = field(default_factory=dict)
    scope_size: int = 0
    suggested: Mapping[str, Suggestion] = field(default_factory=dict)  # failed methods only

    def to_dict(self, *, with_hits: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "query": self.query,
            "doc": self.doc_id,
            "doc_sha256": self.doc_sha256,
            "gold": [g.to_dict() for g in self.gold],
            "ranks": dict(self.ranks),
            "failed": dict(self.failed),
            "metrics": {m: dict(v) for m, v in self.metrics.items()},
            "full_ranks": dict(self.full_ranks),
            "scope_size": self.scope_size,
        }
        if self.suggested:
            out["suggested"] = {m: g.to_dict() for m, g in self.suggested.items()}
        if with_hits:
            out["top"] = {m: [h.to_dict() for h in hits] for m, hits in self.top.items()}
        return out

    @classmethod
    def from_dict(cls, data: object, where: str = "query") -> QueryRecord:
        fields = Fields(data, where)
        keys = ("id", "query", "doc", "gold")
        label = query_from_dict({key: fields.raw(key) for key in keys})
        return cls(
            id=fields.string("id"),
            query=fields.string("query"),
            doc_id=fields.string("doc"),
            doc_sha256=fields.string("doc_sha256"),
            gold=label.gold,
            ranks=fields.mapping_of("ranks", optional(as_int)),
            failed=fields.mapping_of("failed", as_bool),
            metrics=fields.mapping_of("metrics", _VALUES),
            top={m: tuple(hits) for m, hits in fields.mapping_of("top", _HITS, False).items()},
            full_ranks=fields.mapping_of("full_ranks", optional(as_int), required=False),
            scope_size=fields.optional_integer("scope_size") or 0,
            suggested=fields.mapping_of("suggested", Suggestion.read, required=False),
        )

    @classmethod
    def read(cls, data: object, where: str) -> QueryRecord:
        return cls.from_dict(data, where)

    def as_label(self, **meta: object) -> LabelledQuery:
        """This query as a query-set line pinned to the document version it ran on."""
        return LabelledQuery(
            id=self.id,
            query=self.query,
            doc=self.doc_id,
            gold=self.gold,
            doc_sha256=self.doc_sha256,
            meta=meta,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalRun:
    """A finished evaluation. ``metrics[m][name]`` is a mean over ``n[m][name]`` queries;
    ``deltas["b-a"][name]`` is ``b - a`` with its paired bootstrap interval."""

    run_id: str
    created_at: str
    model: str
    policy: Mapping[str, object]
    methods: tuple[str, ...]
    ks: tuple[int, ...]
    text_k: int
    depth: int
    scope: str
    threshold: float
    seed: int
    resamples: int
    corpus: Mapping[str, str]
    queries_sha256: str
    code_version: str
    metrics: Mapping[str, Values]
    n: Mapping[str, Mapping[str, int]]
    deltas: Mapping[str, Mapping[str, DeltaInterval | None]]
    unresolved: tuple[Unresolved, ...]
    queries: tuple[QueryRecord, ...]
    chunks: Mapping[str, Citation] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    imported: Mapping[str, object] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def method(self, name: str) -> MethodSpec:
        """The spec of one of the run's methods: an imported run's retriever from the run
        itself (``core.methods.external_spec``: its score scale, its colour), any other
        from the registry. Reading a run registers nothing; ``UnknownMethodError`` for a
        name that is neither."""
        external = self.imported.get("method")
        if external and name == external:
            return methods.external_spec(name, scored=bool(self.imported.get("scored")))
        return methods.get(name)

    @property
    def stored_methods(self) -> tuple[str, ...]:
        """The stored methods the run's methods need (fusions by their parts, an external
        retriever none), once each: what ranking its queries again computes."""
        return tuple(dict.fromkeys(p for m in self.methods for p in self.method(m).indexed_parts))

    @property
    def policy_label(self) -> str:
        """How the run's policy is named to a reader: an imported chunk set by its name
        ("mine"), any other policy by its key ("fixed-chars-800-100")."""
        return str(self.policy.get("label") or self.policy.get("key", ""))

    def query(self, query_id: str) -> QueryRecord:
        for record in self.queries:
            if record.id == query_id:
                return record
        raise LabelError(f"query {query_id!r} is not in run {self.run_id}")

    def hits(self, query_id: str, method: str) -> list[tuple[RankedHit, Citation]]:
        """The ranked hits of one query under one method, each with its citation."""
        record = self.query(query_id)
        if method not in record.top:
            raise LabelError(f"method {method!r} is not in run {self.run_id}")
        return [(hit, self.chunks[hit.chunk_id]) for hit in record.top[method]]

    def to_dict(self, *, with_hits: bool = True) -> dict[str, object]:
        return (
            {
                "format": RUN_FORMAT,
                "run_id": self.run_id,
                "created_at": self.created_at,
                "model": self.model,
                "policy": dict(self.policy),
                "methods": list(self.methods),
                "ks": list(self.ks),
                "text_k": self.text_k,
                "depth": self.depth,
                "scope": self.scope,
                "threshold": self.threshold,
                "seed": self.seed,
                "resamples": self.resamples,
                "corpus": dict(self.corpus),
                "queries_sha256": self.queries_sha256,
                "code_version": self.code_version,
                "n_queries": self.n_queries,
                "metrics": {m: dict(v) for m, v in self.metrics.items()},
                "n": {m: dict(v) for m, v in self.n.items()},
                "deltas": {
                    pair: {name: d.to_dict() if d else None for name, d in rows.items()}
                    for pair, rows in self.deltas.items()
                },
                "unresolved": [u.to_dict() for u in self.unresolved],
                "timings": dict(self.timings),
                "queries": [q.to_dict(with_hits=with_hits) for q in self.queries],
            }
            | (
                {"chunks": {cid: c.to_dict() for cid, c in self.chunks.items()}}
                if with_hits
                else {}
            )
            | ({"imported": dict(self.imported)} if self.imported else {})
        )

    @classmethod
    def from_dict(cls, data: object, where: str = "run") -> EvalRun:
        fields = Fields(data, where)
        unresolved = tuple(
            Unresolved(
                query_id=u.string("id"),
                doc=u.string("doc"),
                reason=u.string("reason"),
                coverage=u.optional_number("coverage"),
            )
            for u in fields.records("unresolved", required=False)
        )
        return cls(
            run_id=fields.string("run_id"),
            created_at=fields.string("created_at"),
            model=fields.string("model"),
            policy=fields.mapping_of("policy", as_stored),
            methods=tuple(fields.list_of("methods", as_str)),
            ks=tuple(fields.list_of("ks", as_int)),
            text_k=fields.integer("text_k"),
            depth=fields.integer("depth"),
            scope=fields.string("scope"),
            threshold=fields.number("threshold"),
            seed=fields.integer("seed"),
            resamples=fields.integer("resamples"),
            corpus=fields.mapping_of("corpus", as_str),
            queries_sha256=fields.string("queries_sha256"),
            code_version=fields.string("code_version"),
            metrics=fields.mapping_of("metrics", _VALUES),
            n=fields.mapping_of("n", mapping_reader(as_int)),
            deltas=fields.mapping_of("deltas", mapping_reader(optional(DeltaInterval.read))),
            unresolved=unresolved,
            queries=tuple(fields.list_of("queries", QueryRecord.read)),
            chunks=fields.mapping_of("chunks", Citation.read, required=False),
            timings=fields.mapping_of("timings", as_float, required=False),
            imported=_imported(fields.mapping_of("imported", as_stored, required=False)),
        )


def _imported(info: Mapping[str, object]) -> Mapping[str, object]:
    """An imported run's record; its retriever's name is checked here (``EvalRun.method``
    answers for it), and nothing is registered."""
    name = info.get("method")
    if isinstance(name, str) and name:
        methods.external_spec(name, scored=bool(info.get("scored", False)))
    return info


def save_run(run: EvalRun, path: str | os.PathLike[str]) -> Path:
    """Write the run as indented UTF-8 JSON; returns the path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(run.to_dict(), ensure_ascii=False, indent=1) + "\n", "utf-8")
    return file


def load_run(path: str | os.PathLike[str]) -> EvalRun:
    """Read a run saved by ``save_run``; a missing or foreign file is a ``LabelError``."""
    file = Path(path)
    if not file.is_file():
        raise LabelError(f"run file {file} not found: pass a RUN.json written by `eval --out`")
    try:
        data = json.loads(file.read_text("utf-8"))
        written = int(data.get("format", 1))
        if written > RUN_FORMAT:
            raise LabelError(
                f"{file} was written in run format {written}, newer than this Chunkscope's "
                f"({RUN_FORMAT}): upgrade Chunkscope to read it"
            )
        return EvalRun.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise LabelError(f"{file} is not a Chunkscope run file ({exc}): re-run eval --out") from exc


def make_run_id(config: Mapping[str, object]) -> str:
    """``run-`` + 16 hex digits of the sha256 of the canonical JSON of ``config``."""
    raw = json.dumps(config, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return "run-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def source_digest() -> str:
    """First 10 hex digits of the sha256 over the ``core`` package's Python sources, so
    two runs made with different code say so even in an uncommitted working tree."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:10]


@cache
def code_version() -> str:
    """Package version, ``git describe`` when in a git checkout, and the source digest:
    ``0.1.0+git.<describe>+src.<digest>`` (``0.1.0+src.<digest>`` outside git). Read once
    per process (a ``git`` call and every source read): a process runs the code it loaded.

    Only a checkout of Chunkscope is described: an installed package lies in a
    ``site-packages`` that may sit inside the user's own repository (a ``.venv`` in their
    project), whose commit is not Chunkscope's."""
    try:
        version = metadata.version("chunkscope")
    except metadata.PackageNotFoundError:
        version = "unknown"
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():  # a checkout has it (a folder, or a worktree's file)
        return f"{version}+src.{source_digest()}"
    try:
        described = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        tag = described.stdout.strip() if described.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        tag = ""
    git = f"+git.{tag}" if tag else ""
    return f"{version}{git}+src.{source_digest()}"


def model_fingerprint(encoder: object) -> str:
    """Name, pooling, sequence limit, and the model folder's file names and sizes."""
    parts = [str(getattr(encoder, attr, "")) for attr in ("name", "pooling", "max_tokens")]
    folder = Path(str(getattr(encoder, "model_dir", "")))
    if folder.is_dir():
        parts += [
            f"{p.relative_to(folder)}:{p.stat().st_size}"
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def queries_digest(queries: Sequence[LabelledQuery]) -> str:
    """sha256 of the query set as canonical JSON lines (what the labels say, not the file)."""
    lines = [json.dumps(q.to_dict(), sort_keys=True, ensure_ascii=True) for q in queries]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
