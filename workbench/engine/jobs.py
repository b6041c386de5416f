"""The panel of a background job (indexing, a sweep): a progress bar with real counts and
a stop button while it runs, polled twice a second by a fragment; then its summary once,
in place, and one rerun so the page shows what the job made.

While a job runs, the heap it started with is frozen (``hold_heap``). Streamlit runs a full
garbage collection after every script run, fragment reruns included (its
``runner.postScriptGC``); over the half-million objects the model and libraries hold, one
took 2 s on a loaded 2-core machine, all with the GIL held, so two polls a
second left the job's thread (tokenising, pooling, the Python between torch calls) almost
no time: a sweep encoded 14-45x slower in the app than by ``chunkscope sweep``.
Frozen objects are skipped by collections; the last running job to end unfreezes them."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st

from workbench.widgets.wording import md

POLL_S = 0.5


class BackgroundJob(Protocol):
    """What ``core.index.background.IndexJob`` and ``core.tune.job.SweepJob`` both offer."""

    cancel: threading.Event
    announced: bool

    @property
    def running(self) -> bool: ...

    def progress(self) -> tuple[float, str]: ...

    def summary(self) -> tuple[str, str]: ...


_HELD: set[int] = set()  # ids of the running jobs the heap is frozen for
_HELD_LOCK = threading.Lock()


def hold_heap(job: Any) -> None:
    """Freeze the objects that exist now (``gc.freeze``) until ``job`` and every other
    job held this way have stopped running; a no-op for a job already held or ended."""
    with _HELD_LOCK:
        if id(job) in _HELD or not job.running:
            return
        _HELD.add(id(job))
        gc.freeze()
    threading.Thread(target=_release_when_done, args=(job,), daemon=True).start()


def _release_when_done(job: Any) -> None:
    while job.running:
        time.sleep(POLL_S)
    with _HELD_LOCK:
        _HELD.discard(id(job))
        if not _HELD:
            gc.unfreeze()


def summary_line(level: str, line: str) -> None:
    """A job's summary (``success``, ``warning`` or ``error``) as that kind of message."""
    {"success": st.success, "warning": st.warning, "error": st.error}[level](md(line))


def job_panel(job: Any, *, stop_label: str, on_done: Callable[[Any], None] | None = None) -> None:
    """The panel of ``job`` (a ``BackgroundJob``; nothing when None); ``on_done(job)``
    runs once, when the finished job's summary is first shown, before the rerun. The
    heap is held frozen while the job runs (``hold_heap``)."""
    if job is not None:
        hold_heap(job)
        run_every = POLL_S if job.running else None
        st.fragment(_job_body, run_every=run_every)(job, stop_label, on_done)


def _job_body(job: BackgroundJob, stop_label: str, on_done: Callable[[Any], None] | None) -> None:
    if job.running:
        share, line = job.progress()
        st.progress(share, text=line)
        st.button(stop_label, icon=":material/cancel:", on_click=job.cancel.set)
        return
    summary_line(*job.summary())
    if not job.announced:
        job.announced = True
        if on_done is not None:
            on_done(job)
        st.rerun()
