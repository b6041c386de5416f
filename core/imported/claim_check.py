"""Claims checked after the import: your failures first, the loader's text after.

A per-page loader's offsets and pages are checked in that loader's own text of every
claimed page (``core.imported.loader_text``), and reading it is the slow part of an
import: pypdf reads about 14 pages a second, ten times what the parse costs. An import
with ``check_later`` (``import_chunks(..., check_later=True)``) places every chunk by our
text at once and leaves its offset and page claims ``pending``; a run can be scored over
the set, and its failures read, while the loader's text is read. ``check_claims`` then
anchors the same chunks again with the loader's text, as an import without
``check_later`` would: the set it returns is the set that import makes (the same anchors,
claims and checks), and ``moved`` says which chunks the loader's text placed elsewhere
(a run scored meanwhile is made again over the checked set: ``core.diagnose.import_job``).

``CheckClaims`` does it in a daemon thread that a UI polls like the other jobs
(``running``, ``progress()`` with the pages read of all, ``summary()``, ``cancel``): it
reads every page of the pending documents first (the progress), then checks the claims
and keeps the checked set (``keep``). Stopped or failed, the set stays as it was kept,
its claims pending, and says so.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import ChunkscopeError
from core.imported import ChunkSet, ForeignChunk, chunk_sets, import_chunks, save_chunk_set
from core.imported.loader_text import EXTRACTORS, PageTexts, extractor_label
from core.provenance.types import Document


def is_pending(chunk_set: ChunkSet) -> bool:
    return chunk_set.pending() is not None


def _extractor(info: dict[str, Any], doc_id: str | None = None) -> str:
    """The extractor the loader's text of ``doc_id`` (of any pending document without
    one) is read with first: the one given, else the one its rows' metadata named, else
    pypdf (the most common per-page loader's)."""
    hints = dict(info.get("hints") or {})
    named = [hints.get(doc_id)] if doc_id is not None else list(hints.values())
    for name in (info.get("extractor"), *named):
        if name in EXTRACTORS:
            return str(name)
    return "pypdf"


def originals(chunk_set: ChunkSet) -> list[ForeignChunk]:
    """The chunks as the import read them: pages as numbered there (the shift the import
    detected undone where it applied it: on the chunks it placed in a document), each
    document's chunks with the loader their metadata named."""
    info = chunk_set.pending() or {}
    shift = int(info.get("shift") or 0)
    hints = dict(info.get("hints") or {})
    out = []
    for chunk in chunk_set.chunks:
        given, doc_id = chunk.given, chunk.anchor.doc_id
        placed = doc_id is not None
        page = given.page - shift if given.page is not None and placed else given.page
        hint = hints.get(doc_id) if placed else None
        out.append(replace(given, page=page, loader=hint if hint in EXTRACTORS else None))
    return out


def check_claims(
    chunk_set: ChunkSet, docs: Sequence[Document], *, folder: Path | None = None
) -> ChunkSet:
    """``chunk_set`` (imported with ``check_later``) anchored again with the loader's text
    (read, or kept in ``folder``): what an import without ``check_later`` makes of the same
    chunks given the same documents (those of ``docs`` the import was given; a chunk
    whose source named none of them, or several, is judged among the ones here). A set
    with nothing pending is returned as it is."""
    info = chunk_set.pending()
    if info is None:
        return chunk_set
    given = dict(info.get("given") or chunk_set.docs)
    held = [d for d in docs if given.get(d.doc_id) == d.sha256]
    if missing := sorted(set(chunk_set.docs) - {d.doc_id for d in held}):
        raise ChunkscopeError(
            f"chunk set {chunk_set.name} was anchored in {', '.join(missing)}, which the "
            "documents given do not hold at that version: its claims cannot be checked"
        )
    checked, _ = import_chunks(
        originals(chunk_set), held, name=chunk_set.name, shape=chunk_set.shape,
        origin=chunk_set.origin, threshold=chunk_set.threshold,
        extractor=info.get("extractor"), page_base=info.get("page_base"),
        loader_folder=folder,
    )  # fmt: skip
    kept = {k: v for k, v in chunk_set.checks.items() if k not in checked.checks and k != "pending"}
    return replace(checked, created_at=chunk_set.created_at, checks={**kept, **checked.checks})


def moved(before: ChunkSet, after: ChunkSet) -> list[int]:
    """The chunks (by import index) whose span the check changed."""

    def span(chunk: Any) -> tuple[Any, ...]:
        a = chunk.anchor
        return (a.doc_id, a.char_start, a.char_end)

    return [a.anchor.index for a, b in zip(before.chunks, after.chunks, strict=True)
            if span(a) != span(b)]  # fmt: skip


def keep_in(folder: Path, first: ChunkSet) -> Callable[[ChunkSet], None]:
    """A ``keep`` that saves the checked set in ``folder`` only while the folder still
    holds ``first`` (the set the check started from): a set imported again under its name
    meanwhile is never overwritten by the older set's check."""

    def keep(checked: ChunkSet) -> None:
        held = chunk_sets(folder).get(checked.name)
        if held is not None and same_import(held, first):
            save_chunk_set(folder, checked)

    return keep


def same_import(a: ChunkSet, b: ChunkSet) -> bool:
    """Whether two sets are the same import (an import again of other chunks under the
    name, even within the same second, is not)."""
    return (a.name, a.created_at, a.origin, a.threshold, a.checks, a.revision()) == (
        b.name, b.created_at, b.origin, b.threshold, b.checks, b.revision()
    ) and [_kept(c.given) for c in a.chunks] == [_kept(c.given) for c in b.chunks]  # fmt: skip


def _kept(chunk: ForeignChunk) -> tuple[Any, ...]:
    """What a set's file keeps of an imported chunk."""
    return (chunk.index, chunk.text, chunk.source, chunk.claimed_start, chunk.claimed_end,
            chunk.page, chunk.foreign_id)  # fmt: skip


def pages_to_read(chunk_set: ChunkSet, docs: Sequence[Document]) -> int:
    """Pages of the pending documents (the job's progress counts them)."""
    later = set((chunk_set.pending() or {}).get("docs") or ())
    return sum(len(d.pages) for d in docs if d.doc_id in later)


class _Stopped(Exception):
    """Raised between pages once ``cancel`` is set."""


@dataclass(slots=True, kw_only=True)
class CheckClaims:
    """The pending claims of ``chunk_set`` checked in the background; ``keep`` saves the
    checked set where the first was kept; ``then`` are called with it afterwards (a run
    scored meanwhile made again). ``result``: the checked set; ``stopped``/``error`` (one
    line) when it was not made, the set then kept as it was, pending."""

    chunk_set: ChunkSet
    docs: Sequence[Document]
    keep: Callable[[ChunkSet], object]
    folder: Path | None = None
    then: list[Callable[[ChunkSet], object]] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    read: int = 0
    total: int = 0
    checking: bool = False
    result: ChunkSet | None = None
    moved: list[int] = field(default_factory=list)
    stopped: bool = False
    error: str | None = None
    started: float = 0.0
    ended: float = 0.0
    announced: bool = False  # the UI has shown the summary once
    thread: threading.Thread | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive() and not self.done.is_set()

    @property
    def name(self) -> str:
        return self.chunk_set.name

    def start(self) -> None:
        """``run()`` in a daemon thread."""
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def wait(self, cancel: threading.Event | None = None) -> ChunkSet | None:
        """The checked set once the job has ended (``None`` when it was not made);
        ``cancel``: the waiter's own stop, checked a few times a second."""
        while not self.done.wait(0.1):
            if cancel is not None and cancel.is_set():
                return None
        return self.result

    def run(self) -> ChunkSet | None:
        """Read the pages, check the claims, keep the checked set; never raises."""
        self.started = time.perf_counter()
        try:
            info = self.chunk_set.pending() or {}
            later = set(info.get("docs") or ())
            self.total = pages_to_read(self.chunk_set, self.docs)
            for doc in self.docs:
                if doc.doc_id not in later:
                    continue
                pages = PageTexts(doc, _extractor(info, doc.doc_id), self.folder)
                for number in range(1, pages.count + 1):
                    if self.cancel.is_set():
                        raise _Stopped
                    pages.page(number)
                    self.read += 1
            self.checking = True
            checked = check_claims(self.chunk_set, self.docs, folder=self.folder)
            if self.cancel.is_set():  # stopped while the claims were checked: not kept
                raise _Stopped
            self.moved = moved(self.chunk_set, checked)
            self.keep(checked)
            self.result = checked
            for step in self.then:
                step(checked)
        except _Stopped:
            self.stopped = True
        except ChunkscopeError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug: its traceback to the log, one line to the UI
            traceback.print_exc()
            self.error = f"checking the claims failed: {type(exc).__name__}: {exc}"
        finally:
            self.ended = time.perf_counter()
            self.done.set()
        return self.result

    def progress(self) -> tuple[float, str]:
        """Share done (0-1) and a line with the pages read of all."""
        label = extractor_label(_extractor(self.chunk_set.pending() or {}))
        if self.checking:
            return 1.0, f"{self.name}: {label}'s text read; checking each chunk's claims…"
        share = self.read / self.total if self.total else 0.0
        return share, (
            f"{self.name}: reading {label}'s text of its documents' pages, {self.read:,} of "
            f"{self.total:,}; offsets and pages are pending until then"
        )

    def summary(self) -> tuple[str, str]:
        """``(level, line)`` once it has ended."""
        if self.error:
            return "error", f"{self.name}: the claims were not checked ({self.error})."
        if self.stopped or self.result is None:
            return "warning", f"Stopped: {self.name}'s offsets and pages stay unchecked (pending)."
        spent = f"{self.ended - self.started:.1f} s"
        counts = self.result.counts()
        left = counts["claim"]["unchecked"] + counts["page_claim"]["unchecked"]
        if left:
            return "warning", (
                f"{self.name}: the loader's text was read ({spent}), and "
                f"{counts['claim']['unchecked']:,} offset(s) and "
                f"{counts['page_claim']['unchecked']:,} page(s) stay unchecked: the headline "
                "says why."
            )
        moved_line = (
            f"; the loader's text placed {len(self.moved):,} chunk(s) elsewhere than our text did"
            if self.moved
            else ""
        )
        return "success", (
            f"{self.name}: every claim checked in the loader's text ({spent}){moved_line}."
        )
