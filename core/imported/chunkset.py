"""An imported chunk set: kept beside the index under its name, and offered as a policy.

A set is one JSON file, ``<folder>/<name>.json`` (the folder is ``chunksets/`` in the store
folder, or beside the triage file for a Chroma server, where the runs are kept too),
written to a temporary name and renamed. It holds every imported chunk with its text, the
source and offsets it came with, and its anchor and claim (``core.imported.anchor``), and
the documents it was anchored in by ``doc_id`` and sha256. Importing under the same name
replaces the file.

``register_chunk_sets`` registers each set of a folder in the policy registry as a policy
of the set's name whose boundaries are fixed (``PolicySpec.fixed_boundaries``): its
pieces in a document are the distinct anchored spans (``exact`` or ``aligned``) of that
document version, so every page and command that takes a policy chunks, embeds, ranks and
cites exactly the imported spans. A document version the set was not anchored in has no
chunks under it.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.chunk import policy_registry as registry
from core.chunk.spans import Piece
from core.config import StoreLocation, store_folder
from core.imported.anchor import ANCHORS, CLAIMS, PAGE_CLAIMS, Anchor
from core.imported.shapes import ForeignChunk, ImportChunksError

FOLDER_NAME = "chunksets"
FORMAT = "chunkscope-chunkset/1"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportedChunk:
    """One imported chunk as kept: what the import said, and where it was anchored."""

    given: ForeignChunk
    anchor: Anchor

    def to_dict(self) -> dict[str, object]:
        a, g = self.anchor, self.given
        return {
            "index": g.index,
            "foreign_id": g.foreign_id,
            "source": g.source,
            "doc_id": a.doc_id,
            "doc_sha256": a.doc_sha256,
            "anchor": a.anchor,
            "char_start": a.char_start,
            "char_end": a.char_end,
            "coverage": a.coverage,
            "pages": list(a.pages),
            "claim": a.claim,
            "claimed_start": g.claimed_start,
            "claimed_end": g.claimed_end,
            "page": g.page,
            "page_claim": a.page_claim,
            "places": a.places,
            "detail": a.detail,
            "text": g.text,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ImportedChunk:
        given = ForeignChunk(
            index=int(raw["index"]),
            text=str(raw["text"]),
            source=raw.get("source"),
            claimed_start=raw.get("claimed_start"),
            claimed_end=raw.get("claimed_end"),
            page=raw.get("page"),
            foreign_id=raw.get("foreign_id"),
        )
        page_claim = raw.get("page_claim") or ("absent" if given.page is None else "unchecked")
        if (
            raw["anchor"] not in ANCHORS
            or raw["claim"] not in CLAIMS
            or (page_claim not in PAGE_CLAIMS)
        ):
            raise ValueError(f"chunk {given.index}: unknown anchor or claim")
        anchor = Anchor(
            index=given.index,
            doc_id=raw.get("doc_id"),
            doc_sha256=raw.get("doc_sha256"),
            anchor=raw["anchor"],
            char_start=raw.get("char_start"),
            char_end=raw.get("char_end"),
            coverage=raw.get("coverage"),
            pages=tuple(raw.get("pages") or ()),
            claim=raw["claim"],
            claimed_start=given.claimed_start,
            places=int(raw.get("places", 0)),
            detail=str(raw.get("detail", "")),
            page_claim=page_claim,
            claimed_page=given.page,
        )
        return cls(given=given, anchor=anchor)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkSet:
    """A named set of imported chunks; ``docs`` maps each anchored document's ``doc_id``
    to the sha256 of the version it was anchored in; ``origin`` says where it came from
    (a file name or ``chroma:<where>/<collection>``); ``checks`` says how the claims were
    checked: ``extractors`` (each document's loader text, as ``pypdf 7.1.1``, or ``None``),
    ``extractor_how`` (``given``, ``metadata`` or ``trial``), ``tried`` (the extractors
    tried where none reproduced the text), ``page_base`` and ``page_base_how``
    (``given``, ``detected`` or ``default``)."""

    name: str
    shape: str
    origin: str
    created_at: str
    threshold: float
    docs: dict[str, str]
    chunks: tuple[ImportedChunk, ...]
    checks: dict[str, Any] = field(default_factory=dict)
    _spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict, compare=False)

    def counts(self) -> dict[str, dict[str, int]]:
        """How many chunks have each anchor, claim and page-claim verdict (every kind
        listed)."""
        anchors: dict[str, int] = {k: 0 for k in ANCHORS}
        claims: dict[str, int] = {k: 0 for k in CLAIMS}
        pages: dict[str, int] = {k: 0 for k in PAGE_CLAIMS}
        for chunk in self.chunks:
            anchors[chunk.anchor.anchor] += 1
            claims[chunk.anchor.claim] += 1
            pages[chunk.anchor.page_claim] += 1
        return {"anchor": anchors, "claim": claims, "page_claim": pages}

    def spans(self, doc_sha256: str) -> list[tuple[int, int]]:
        """The distinct anchored spans in that document version, in text order."""
        if doc_sha256 not in self._spans:
            self._spans[doc_sha256] = sorted(
                {
                    (c.anchor.char_start, c.anchor.char_end)
                    for c in self.chunks
                    if c.anchor.doc_sha256 == doc_sha256
                    and c.anchor.char_start is not None
                    and c.anchor.char_end is not None
                }
            )
        return self._spans[doc_sha256]

    def number(self, chunk: ImportedChunk) -> int | None:
        """The chunk's number wherever the set is drawn as a policy (the Chunks page, its
        citations): 1 + the place of its span among its document's ``spans``, in text
        order; ``None`` for a chunk that is not anchored (not drawn)."""
        a = chunk.anchor
        if a.char_start is None or a.char_end is None or not a.doc_sha256:
            return None
        spans = self.spans(a.doc_sha256)
        at = bisect.bisect_left(spans, (a.char_start, a.char_end))
        return at + 1 if at < len(spans) and spans[at] == (a.char_start, a.char_end) else None

    def pending(self) -> dict[str, Any] | None:
        """What the import left to check in the loader's text (``checks["pending"]``:
        ``core.imported.claim_check``), or ``None`` when no claim is pending."""
        info = self.checks.get("pending")
        return dict(info) if isinstance(info, dict) else None

    def revision(self) -> str:
        """A digest of every anchored span (which document version, where): changes
        whenever the set's boundaries do, under the same name."""
        spans = sorted(
            (c.anchor.doc_sha256 or "", *_span(c)) for c in self.chunks if c.anchor.anchored
        )
        return hashlib.sha256(json.dumps(spans).encode()).hexdigest()[:16]

    def longest(self) -> int:
        """Characters in the longest anchored span (at least 1)."""
        return max((b - a for c in self.chunks for a, b in [_span(c)] if b > a), default=1)

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "name": self.name,
            "shape": self.shape,
            "origin": self.origin,
            "created_at": self.created_at,
            "threshold": self.threshold,
            "docs": dict(self.docs),
            "counts": self.counts(),
            "checks": dict(self.checks),
            "chunks": [c.to_dict() for c in self.chunks],
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ChunkSet:
        if raw.get("format") != FORMAT:
            raise ValueError(f"not a chunk set ({raw.get('format')!r})")
        return cls(
            name=str(raw["name"]),
            shape=str(raw["shape"]),
            origin=str(raw["origin"]),
            created_at=str(raw["created_at"]),
            threshold=float(raw["threshold"]),
            docs={str(k): str(v) for k, v in dict(raw["docs"]).items()},
            chunks=tuple(ImportedChunk.from_dict(c) for c in raw["chunks"]),
            checks=dict(raw.get("checks") or {}),
        )


def _span(chunk: ImportedChunk) -> tuple[int, int]:
    a = chunk.anchor
    return (a.char_start or 0, a.char_end or 0)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_name(name: str) -> str:
    """``name`` if it can name a set (letters, digits, '_', starting with a letter) and is
    not a built-in policy; else one line saying so."""
    if not _NAME.fullmatch(name):
        raise ImportChunksError(
            f"--name {name!r}: a chunk set's name is a letter, then letters, digits or '_' "
            "(at most 48)"
        )
    spec = registry.find(name)
    if spec is not None and not spec.fixed_boundaries:
        raise ImportChunksError(f"--name {name!r} is a built-in policy: choose another name")
    return name


def name_from(origin: str) -> str:
    """A set name from a file or collection name (other characters become '_')."""
    stem = Path(origin).stem if "/" in origin or "." in origin else origin
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or "imported"
    if not cleaned[0].isalpha():
        cleaned = "set_" + cleaned
    return cleaned[:48]


def sets_folder(location: StoreLocation) -> Path:
    """``chunksets/`` in the store folder, or beside the triage file for a server."""
    if location.path is not None:
        return location.path / FOLDER_NAME
    return store_folder() / FOLDER_NAME  # where the triage file and runs live


def save_chunk_set(folder: Path, chunk_set: ChunkSet) -> Path:
    """Write the set (replacing one of the same name); returns its file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{chunk_set.name}.json"
    # a part file per process and thread: a background claim check saves sets too
    partial = path.with_suffix(f".json.{os.getpid()}-{threading.get_ident()}.part")
    partial.write_text(json.dumps(chunk_set.to_dict(), ensure_ascii=False), encoding="utf-8")
    partial.replace(path)
    return path


def load_chunk_set(path: Path) -> ChunkSet:
    try:
        return ChunkSet.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ImportChunksError(f"{path} is not a readable chunk set ({exc})") from None


_LOADED: dict[str, tuple[tuple[int, int], ChunkSet]] = {}


def chunk_sets(folder: Path) -> dict[str, ChunkSet]:
    """Every readable set in ``folder`` by name (files are re-read only when changed)."""
    found: dict[str, ChunkSet] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = _LOADED.get(str(path))
        if cached is None or cached[0] != stamp:
            try:
                cached = (stamp, load_chunk_set(path))
            except ImportChunksError:
                continue  # a damaged file is skipped here; `import-chunks` rewrites it
            _LOADED[str(path)] = cached
        found[cached[1].name] = cached[1]
    return found


def policy_spec(chunk_set: ChunkSet) -> registry.PolicySpec:
    """The set as a policy whose pieces are its anchored spans (see the module doc)."""

    def pieces(analysis: Any, _index: Any, _policy: Any) -> list[Piece]:
        return [Piece(char_start=a, char_end=b) for a, b in chunk_set.spans(analysis.doc_sha256)]

    counts = chunk_set.counts()["anchor"]
    placed = counts["exact"] + counts["aligned"]
    return registry.PolicySpec(
        name=chunk_set.name,
        summary=f"{placed:,} of {len(chunk_set.chunks):,} chunks from {chunk_set.origin} "
        "anchored in the text",
        sizes={"chars": (chunk_set.longest(), 0)},
        unit="chars",
        pieces=pieces,
        fixed_boundaries=True,
        order=50,
        revision=chunk_set.revision(),
    )


def register_chunk_sets(folder: Path) -> dict[str, ChunkSet]:
    """Register every set of ``folder`` as a policy (replacing sets registered before
    from any folder, so only this folder's sets are offered); returns them."""
    sets = chunk_sets(folder)
    for name in registry.fixed_names():
        if name not in sets:
            registry.unregister_fixed(name)
    for chunk_set in sets.values():
        if (
            registry.find(chunk_set.name) is not None
            and not registry.get(chunk_set.name).fixed_boundaries
        ):
            continue  # a file named like a built-in policy never shadows it
        registry.register(policy_spec(chunk_set), replace=True)
    return sets
