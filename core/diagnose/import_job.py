"""Our methods added to an imported run after it is kept: ours after yours, cancellable.

An imported run is kept with the retriever alone first (``core.evaluate.imported_run``:
its ``pending_methods`` being computed); an ``AddMethods`` then computes our methods over
the set's spans, diagnoses every failure of the grown run again (each method of a query
its own suggestion, the retriever's now read beside ours: ``run_failures``)
and keeps it in place of the first (same ``run_id``). Stopped (``cancel.set()``, checked
at every progress event while ours embed, or Ctrl-C in a command) or failed, it keeps the
first run again with its pending methods ``stopped``: a valid run of the retriever that
says which methods were never added. The diagnosis, once ours are computed, is not
interrupted by ``cancel``.

An import over a chunk set whose claims are still being checked (``claims``: the
``core.imported.claim_check.CheckClaims`` job) scores the retriever over the set as it
was placed by our text; the job then waits for the check and, once the set is checked,
maps the log to it again (``remake``) and makes the run again, with our methods when
asked. It stays the same run (the same ``run_id``, so its tags and links hold, though
the set's longest span, part of the id, may have changed), and ``methods`` may then be
empty. A check that was stopped or failed leaves the first run as it was, its claims
pending, and says so.

``run()`` does it in the calling thread (the command line); ``start()`` in a daemon
thread that a UI polls like ``core.tune.job.SweepJob``: ``running``, ``progress()``
(the share done and a line with the real counts), ``summary()`` once it has ended.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from core import defaults
from core.diagnose.run_failures import suggest_run
from core.errors import ChunkscopeError
from core.evaluate.cost import duration_so_far, progress_line
from core.evaluate.imported_run import LogImport, added, with_pending
from core.evaluate.run_file import EvalRun

Keep = Callable[[EvalRun], object]


class _Stopped(Exception):
    """Raised from a progress event once ``cancel`` is set."""


@dataclass(slots=True, kw_only=True)
class AddMethods:
    """``methods`` added to ``first`` (the run ``found.run()`` made, kept with them
    pending); ``keep`` saves a run where the first was kept (the store's ``runs/``).
    ``result`` is the grown run, ``stopped`` whether it was stopped, ``error`` a one-line
    message when it failed; in both cases the first run is kept again, ``stopped``."""

    found: LogImport
    first: EvalRun
    methods: tuple[str, ...]
    encoder: Any
    keep: Keep
    ks: tuple[int, ...] = defaults.KS
    embed: Any = None
    cache: Any = None
    on_progress: Callable[[int, int], None] | None = None
    claims: Any = None  # the chunk set's claim check, waited for (see the module doc)
    remake: Callable[[Any], LogImport] | None = None  # the log over the checked set
    cancel: threading.Event = field(default_factory=threading.Event)
    latest: tuple[int, int] | None = None
    waiting: bool = False
    diagnosing: bool = False
    result: EvalRun | None = None
    stopped: bool = False
    error: str | None = None
    started: float = 0.0
    announced: bool = False  # the UI has shown the summary once
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def run_id(self) -> str:
        return self.first.run_id

    def start(self) -> None:
        """``run()`` in a daemon thread."""
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> EvalRun:
        """Compute, diagnose and keep the grown run; never raises for a stop (Ctrl-C
        included) or a failure: returns the run kept (the first, stopped, then)."""
        self.started = time.perf_counter()
        try:
            remade = self._after_claims()
            full = self.found.run(
                self.methods, encoder=self.encoder, ks=self.ks, embed=self.embed,
                cache=self.cache, progress=self._note,
            )  # fmt: skip
            self.diagnosing = True
            full = suggest_run(full, self.found.docs, chunker=self.found.parts,
                               encoder=self.encoder, embed=self.embed)[0]  # fmt: skip
            if remade:  # the same run, its set checked: it keeps its id (and its tags)
                grown = replace(with_pending(full, ()), run_id=self.first.run_id,
                                created_at=self.first.created_at)  # fmt: skip
            else:
                grown = added(self.first, full)
            self.keep(grown)
            self.result = grown
            return grown
        except (_Stopped, KeyboardInterrupt):
            self.stopped = True
        except ChunkscopeError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug: its traceback to the log, one line to the UI
            traceback.print_exc()
            what = f"adding {', '.join(self.methods)}" if self.methods else "making the run again"
            self.error = f"{what} failed: {type(exc).__name__}: {exc}"
        kept = with_pending(self.first, self.methods, "stopped")
        self.keep(kept)
        return kept

    def _after_claims(self) -> bool:
        """Wait for the set's claim check, then map the log to the checked set; whether
        the run is made again over it."""
        if self.claims is None:
            return False
        self.waiting = True
        checked = self.claims.wait(self.cancel)
        self.waiting = False
        if self.cancel.is_set():
            raise _Stopped
        if checked is None and not self.methods:  # nothing to make again, nothing to add
            raise _Stopped
        if checked is None or self.remake is None:
            return False
        self.found = self.remake(checked)
        return True

    def _note(self, done: int, total: int) -> None:
        if self.cancel.is_set():
            raise _Stopped
        self.latest = (done, total)
        if self.on_progress is not None:
            self.on_progress(done, total)

    def progress(self) -> tuple[float, str]:
        """Share done (0-1) and a line naming the methods still being computed."""
        names = ", ".join(self.methods) or self.found.name
        elapsed = time.perf_counter() - self.started if self.started else 0.0
        if self.waiting and self.claims is not None:
            share, line = self.claims.progress()
            return share, f"{line}; then this run is made again over the checked set"
        if self.diagnosing:
            return 1.0, f"{names}: computed; diagnosing their failures…"
        if self.latest is None or not self.latest[1]:
            return 0.0, f"{names}: being computed over the set's spans (chunking…)"
        done, total = self.latest
        line = progress_line(done, total, elapsed, what="embedded")  # the one time-left rule
        return done / total, f"{names}: being computed over the set's spans ({line})"

    def summary(self) -> tuple[str, str]:
        """``(level, line)`` once it has ended: success, warning (stopped) or error."""
        names = ", ".join(self.methods)
        alone = f"the run keeps {self.found.name} alone: import it again to add them"
        if not self.methods:
            return self._remade_summary()
        if self.error:
            return "error", f"{names} were not added ({self.error}); {alone}."
        if self.stopped:
            return "warning", f"Stopped: {names} were not added; {alone}."
        spent = duration_so_far(time.perf_counter() - self.started)
        checked = " over the checked set" if self.claims is not None and self.claims.result else ""
        return "success", f"Added {names} to the run{checked}, beside {self.found.name} ({spent})."

    def _remade_summary(self) -> tuple[str, str]:
        """The summary of a job that only made the run again once the claims were checked."""
        again = "import the run again once they are"
        if self.error:
            return "error", (
                f"The run was not made again over the checked set ({self.error}); {again}."
            )
        if self.stopped or self.result is None:
            return "warning", (
                "Stopped: the run stays scored over the set before its claims were checked; "
                f"{again}."
            )
        return "success", "The run was made again over the chunk set with its claims checked."
