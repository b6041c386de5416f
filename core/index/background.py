"""An indexing run in a background thread: progress with real counts, cancel between batches.

A UI starts an ``IndexJob`` with ``start`` and polls it: ``running`` while the thread
lives, ``progress()`` for a share (0-1) and a line built from the latest
``core.index.indexer.IndexProgress``, ``cancel.set()`` to stop it
(``core.index.indexer.index_documents`` checks between batches, so what is stored stays
consistent and a later run of the same job completes the rest), then ``summary()`` once
it has ended. ``index`` is the indexing function (``index_documents`` unless a caller
passes another with its signature).
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core import methods as registry
from core.index.indexer import IndexProgress, IndexReport, index_documents
from core.provenance.types import ChunkPolicy, Document

__all__ = ["IndexJob"]

STAGE_WORDS = {"parse": "parsing", "skip": "already indexed", "done": "done"}


@dataclass(slots=True, kw_only=True)
class IndexJob:
    """One indexing run; ``latest`` is the last progress event, ``report`` the result
    (None until the run ends), ``error`` a one-line message when the run raised."""

    docs: list[Document]
    methods: tuple[str, ...]
    policy: ChunkPolicy
    index: Callable[..., IndexReport] = index_documents
    cancel: threading.Event = field(default_factory=threading.Event)
    latest: IndexProgress | None = None
    report: IndexReport | None = None
    error: str | None = None
    announced: bool = False  # the UI has shown the summary once
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self, opened: Any, encoder: Any, cache: Any = None) -> None:
        """Run in a daemon thread against store ``opened`` with ``encoder`` and ``cache``."""
        self.thread = threading.Thread(target=self.run, args=(opened, encoder, cache))
        self.thread.daemon = True
        self.thread.start()

    def run(self, opened: Any, encoder: Any, cache: Any = None) -> None:
        """The run itself (in the calling thread); never raises."""
        try:
            self.report = self.index(
                self.docs, policy=self.policy, methods=self.methods, encoder=encoder,
                store=opened, progress=self._note, should_cancel=self.cancel.is_set, cache=cache,
            )  # fmt: skip
        except Exception as exc:  # a bug: keep its traceback in the log, say so in one line
            traceback.print_exc()
            self.error = f"indexing failed: {type(exc).__name__}: {exc}"

    def _note(self, event: IndexProgress) -> None:
        self.latest = event

    def progress(self) -> tuple[float, str]:
        """Share done (0-1, by documents, then methods, then the stage's own counts; 1.0 once
        the last document is done) and a line with the real counts."""
        e = self.latest
        if e is None:
            return 0.0, f"Starting: {len(self.docs)} document(s)…"
        step = self.methods.index(e.method) if e.method in self.methods else 0
        part = (step + (e.done / e.total if e.total else 0.0)) / len(self.methods)
        if e.stage == "done":  # its counts are documents, not the methods' units
            part = 1.0
        share = min(1.0, (e.doc_index + part) / max(e.n_docs, 1))
        unit = registry.get(e.method).progress_unit if e.method else "chunks"
        what = {
            **STAGE_WORDS,
            "chunk": f"{e.total} chunks",
            "embed": f"embedding {e.method}: {e.done} of {e.total} {unit}",
            "store": f"storing {e.method}: {e.done} of {e.total} chunks",
        }.get(e.stage, e.stage)
        return share, f"Document {e.doc_index + 1} of {e.n_docs} ({e.doc_id}): {what}"

    def summary(self) -> tuple[str, str]:
        """(level, one line) about the finished job: success, warning or error."""
        if self.error or self.report is None:
            return "error", self.error or "indexing stopped without a report"
        report = self.report
        failed = [d for d in report.documents if d.error]
        done = sum(bool(d.indexed or d.skipped) and not d.error for d in report.documents)
        line = (
            f"{done} of {len(self.docs)} document(s) indexed ({', '.join(report.methods)}, "
            f"policy {report.policy.key}) in {report.elapsed_s:.1f} s"
        )
        if report.cancelled:
            return "warning", f"Cancelled: {line}. Start again to finish the rest."
        if report.halted:
            return "error", f"Stopped: {line}. {report.halted}"
        if failed:
            return "warning", line + "; " + "; ".join(f"{d.doc_id}: {d.error}" for d in failed)
        return "success", line
